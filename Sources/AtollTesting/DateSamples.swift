import AtollCore
import Foundation

/// Dates that test the exact storage of `Date` (issue 23 §4): today's, with sub-microsecond
/// fractions, before 1970 and before 2001, the extremes, and random bit patterns; and the
/// encodings Atoll wrote before dates were exact, so a test can write an old file or store.
///
/// ```swift
/// var rng = SeededRandom(seed: 7)
/// for date in DateSamples.dates(count: 500, using: &rng) { … }
/// ```
package enum DateSamples {
    /// The dates every test of exactness includes.
    package static let fixed: [Date] = [
        Date(), Date.distantPast, Date.distantFuture, Date(timeIntervalSinceReferenceDate: 0),
        Date(timeIntervalSince1970: 0), Date(timeIntervalSinceReferenceDate: -0.000_000_123),
        Date(timeIntervalSinceReferenceDate: 1e-300), Date(timeIntervalSince1970: -1_234_567_890.987_654_321),
        Date(timeIntervalSinceReferenceDate: 7.6e8 + 0.123_456_789_012),
        // The two neighbours of a date today: REAL seconds since 1970 could not tell them apart.
        Date(timeIntervalSinceReferenceDate: 7.6e8.nextUp), Date(timeIntervalSinceReferenceDate: 7.6e8.nextUp.nextUp),
    ]

    /// ``fixed``, then `count` random dates: around now with random low bits (sub-microsecond
    /// fractions), anywhere from distantPast to distantFuture, and negative ones.
    package static func dates(count: Int, using rng: inout some RandomNumberGenerator) -> [Date] {
        let now = Date().timeIntervalSinceReferenceDate
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

    /// The date as Atoll read it back before format 4 and protocol version 2: through seconds
    /// since 1970.
    package static func legacy(_ date: Date) -> Date {
        Date(timeIntervalSince1970: date.timeIntervalSince1970)
    }

    /// How Atoll stored a date before format 4: REAL seconds since 1970.
    package static func legacySeconds(_ date: Date) -> Double { date.timeIntervalSince1970 }

    /// `value`'s encoding (`Value.encode`) as Atoll wrote it before protocol version 2: dates
    /// tagged 7, seconds since 1970.
    package static func legacyEncoding(_ value: Value) -> [UInt8] {
        var w = BinaryWriter()
        legacyEncode(value, into: &w)
        return w.bytes
    }

    private static func legacyEncode(_ value: Value, into w: inout BinaryWriter) {
        switch value {
        case .date(let d):
            w.byte(7)
            w.fixed64(d.timeIntervalSince1970.bitPattern)
        case .list(let items):
            w.byte(13); w.varint(UInt64(items.count))
            for item in items { legacyEncode(item, into: &w) }
        case .map(let entries):
            w.byte(15); w.varint(UInt64(entries.count))
            for (k, v) in entries.sorted(by: { $0.key < $1.key }) { w.string(k); legacyEncode(v, into: &w) }
        default:
            value.encode(into: &w)
        }
    }

    /// `changeset` encoded as Atoll wrote it before protocol version 2: its `set`, `listInsert`
    /// and `setInsert` values with dates tagged 7. Only changesets whose dates stand in those
    /// instructions' values are supported (what the migration tests write).
    package static func legacyEncoding(_ changeset: Changeset) -> Data {
        let modern = [UInt8](changeset.encoded())
        var legacy = modern
        // Replace each date (tag 16, 8 bytes since 2001) by its old form, same length.
        for date in datesIn(changeset) {
            var new = BinaryWriter(); Value.date(date).encode(into: &new)
            let old = legacyEncoding(.date(date))
            guard let at = find(new.bytes, in: legacy) else { continue }
            legacy.replaceSubrange(at..<at + new.bytes.count, with: old)
        }
        return Data(legacy)
    }

    private static func datesIn(_ changeset: Changeset) -> [Date] {
        func dates(_ value: Value) -> [Date] {
            switch value {
            case .date(let d): [d]
            case .list(let items), .set(let items): items.flatMap(dates)
            case .map(let entries), .object(let entries): entries.values.flatMap(dates)
            default: []
            }
        }
        return changeset.instructions.flatMap { instruction -> [Date] in
            switch instruction {
            case .set(_, _, let v), .listInsert(_, _, _, let v), .setInsert(_, _, let v), .setErase(_, _, let v): dates(v)
            default: []
            }
        }
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard needle.count <= haystack.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start..<start + needle.count].elementsEqual(needle) {
            return start
        }
        return nil
    }
}
