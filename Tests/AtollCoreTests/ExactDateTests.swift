import AtollCore
import AtollTesting
import Foundation
import Testing

/// A `Date` written and read back is `==` to the one written (issue 23 §4): the value encoding,
/// the SQL form, query text and the evaluator keep `Date`'s own bits (seconds since 2001).
@Suite struct ExactDateTests {
    /// Dates today with random low bits, sub-microsecond fractions, before 1970 and 2001, the
    /// extremes. (AtollTesting's `DateSamples` is the same for the suites that link it.)
    static func samples(_ count: Int = 2_000, seed: UInt64 = 23) -> [Date] {
        var rng = SplitMix64(seed: seed)
        let now = Date().timeIntervalSinceReferenceDate
        let fixed = [Date(), .distantPast, .distantFuture, Date(timeIntervalSinceReferenceDate: 0),
                     Date(timeIntervalSinceReferenceDate: -0.000_000_123), Date(timeIntervalSinceReferenceDate: 1e-300),
                     Date(timeIntervalSince1970: -1_234_567_890.987_654_321), Date(timeIntervalSinceReferenceDate: 7.6e8.nextUp)]
        let range = Date.distantPast.timeIntervalSinceReferenceDate...Date.distantFuture.timeIntervalSinceReferenceDate
        return fixed + (0..<count).map { i in
            switch i % 4 {
            case 0: Date()
            case 1: Date(timeIntervalSinceReferenceDate: now + Double.random(in: -1e9...1e9, using: &rng))
            case 2: Date(timeIntervalSinceReferenceDate: Double.random(in: range, using: &rng))
            default: Date(timeIntervalSinceReferenceDate: -Double.random(in: 0...1e9, using: &rng))
            }
        }
    }

    @Test func datesRoundTripThroughChangesetsAndMixedBlobs() throws {
        let dates = Self.samples()
        let changeset = Changeset(version: 1, timestamp: 1, instructions: dates.enumerated().map { i, date in
            .set(ObjectID(type: "Event", primaryKey: .int(Int64(i))), path: [.property("at")], value: .date(date))
        })
        let decoded = try Changeset(decoding: changeset.encoded())
        #expect(decoded == changeset)
        for date in dates {
            let mixed = Value.list([.date(date), .map(["at": .date(date)])])
            #expect(Value(mixedSQL: mixed.mixedSQLValue) == mixed)
        }
    }

    @Test func datesRoundTripThroughTheirSQLForm() {
        for date in Self.samples() {
            #expect(Value(sql: Value.date(date).sqlValue, type: .date) == .date(date), "\(date.timeIntervalSinceReferenceDate)")
        }
    }

    /// The SQL form is a REAL that orders as the dates do, neighbours included, so `ORDER BY`,
    /// `MIN`/`MAX` and comparisons in SQL agree with `Date`'s own order.
    @Test func theSQLFormOrdersAsDatesDo() {
        let dates = Self.samples(500)
        let neighbours = dates.map { Date(timeIntervalSinceReferenceDate: $0.timeIntervalSinceReferenceDate.nextUp) }
        for (a, b) in zip(dates + dates, neighbours + dates.reversed()) {
            guard case .real(let x) = Value.date(a).sqlValue, case .real(let y) = Value.date(b).sqlValue else {
                Issue.record("a date's SQL form is not a REAL")
                return
            }
            #expect((x < y) == (a < b) && (x == y) == (a == b))
        }
    }

    @Test func equalDatesHaveEqualBytes() {
        let zero = Date(timeIntervalSinceReferenceDate: 0), negativeZero = Date(timeIntervalSinceReferenceDate: -0.0)
        #expect(zero == negativeZero)
        #expect(Value.date(zero).mixedSQLValue == Value.date(negativeZero).mixedSQLValue)
    }

    /// Bytes written before protocol version 2 (tag 7, seconds since 1970) decode as the old code
    /// read them, so history, pending changesets and backups written then keep their meaning.
    @Test func theOldDateTagDecodesAsItWasRead() throws {
        for date in Self.samples(200) {
            var w = BinaryWriter()
            w.byte(7)
            w.fixed64(date.timeIntervalSince1970.bitPattern)
            var r = BinaryReader(w.bytes)
            #expect(try Value.decode(from: &r) == .date(Date(timeIntervalSince1970: date.timeIntervalSince1970)))
        }
    }

    /// Subscriptions reach the server as query text: a date constant printed and parsed back is
    /// `==` (beyond the 2^23 s, about 97 days, around 2001-01-01 where `Date` steps by a nanosecond
    /// or less: found at -89 days).
    @Test func aDateInQueryTextParsesBackEqual() throws {
        for date in Self.samples() where date.timeIntervalSinceReferenceDate.magnitude >= 8_388_608 {
            let query = try QueryExpression.parse("due == $0", arguments: [.date(date)])
            let reparsed = try QueryExpression.parse(query.description)
            #expect(reparsed == query, "\(query.description) for \(date.timeIntervalSinceReferenceDate)")
        }
        #expect(Date(seconds: 1_700_000_000, nanoseconds: 500_000_000).timestamp == (1_700_000_000, 500_000_000))
        #expect(Date(seconds: -5, nanoseconds: -250_000_000).timestamp == (-6, 750_000_000))
        #expect(Date.distantPast.timestamp == (-62_135_769_600, 0))
    }

    /// The evaluator (the server's flexible sync and permission rules, in-memory results) tells
    /// apart dates seconds since 1970 could not.
    @Test func theEvaluatorComparesDatesExactly() throws {
        let date = Date(timeIntervalSinceReferenceDate: 7.6e8)
        let next = Date(timeIntervalSinceReferenceDate: 7.6e8.nextUp)
        #expect(date.timeIntervalSince1970 == next.timeIntervalSince1970)  // what the old form saw
        let task: [String: Value] = ["due": .date(next)]
        #expect(try QueryTestSchema.bind("due == $0", [.date(next)]).evaluate(on: task, resolver: NoLinkResolver()))
        #expect(try !QueryTestSchema.bind("due == $0", [.date(date)]).evaluate(on: task, resolver: NoLinkResolver()))
        #expect(try QueryTestSchema.bind("due > $0", [.date(date)]).evaluate(on: task, resolver: NoLinkResolver()))
    }
}
