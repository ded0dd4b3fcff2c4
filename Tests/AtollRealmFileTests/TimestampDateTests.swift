import AtollRealmFile
import Foundation
import Testing

/// A Realm `Timestamp` becomes the `Date` realm-swift stored in it (issue 23 §4): read back
/// through seconds since 2001, as `RLMTimestampToNSDate` does, not through seconds since 1970.
@Suite struct TimestampDateTests {
    /// What realm-swift stores for a date (`RLMTimestampForNSDate`).
    static func stored(_ date: Date) -> RealmTimestamp {
        let t = date.timeIntervalSinceReferenceDate
        var seconds = Int64(t)
        var nanoseconds = Int32((t - Double(seconds)) * 1e9)
        seconds += 978_307_200
        if nanoseconds < 0 && seconds > 0 {
            nanoseconds += 1_000_000_000
            seconds -= 1
        }
        return RealmTimestamp(seconds: seconds, nanoseconds: nanoseconds)
    }

    @Test func aTimestampReadsAsTheDateRealmSwiftStored() {
        var rng = SystemRandomNumberGenerator()
        let now = Date().timeIntervalSinceReferenceDate
        let dates = (0..<5_000).map { i in
            i % 2 == 0 ? Date() : Date(timeIntervalSinceReferenceDate: now + Double.random(in: -3e8...3e8, using: &rng))
        }
        let lost = dates.filter { Self.stored($0).date != $0 }
        #expect(lost.isEmpty, "\(lost.count) dates differ, e.g. \(lost.first.map(\.timeIntervalSinceReferenceDate) ?? 0)")
        #expect(RealmTimestamp(seconds: 1_700_000_000, nanoseconds: 123_456_789).date
                    == Date(timeIntervalSinceReferenceDate: 1_700_000_000 - 978_307_200 + 0.123_456_789))
    }
}
