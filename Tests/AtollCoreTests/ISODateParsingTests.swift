@testable import AtollCore
import Foundation
import Testing

/// `$date`'s ISO-8601 strings, parsed by hand, against Foundation's formatter.
@Suite struct ISODateParsingTests {
    /// From 1583 on: before the Gregorian reform Foundation's calendar is Julian, where ISO 8601
    /// (and MongoDB) count in the proleptic Gregorian calendar, as the parser does.
    @Test func randomDatesAgreeWithFoundationsFormatter() {
        var rng = SystemRandomNumberGenerator()
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for _ in 0..<2_000 {
            let millis = Int64.random(in: -12_212_553_600_000...253_402_300_799_000, using: &rng)
            let date = Date(timeIntervalSince1970: Double(millis) / 1000)
            let text = formatter.string(from: date)
            let parsed = ExtendedJSON.parseISODate(text)
            #expect(parsed.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) } == millis, "\(text)")
        }
    }

    @Test func offsetsFractionsAndSpellings() {
        func millis(_ text: String) -> Int64? { ExtendedJSON.parseISODate(text).map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) } }
        #expect(millis("1970-01-01T00:00:00Z") == 0)
        #expect(millis("1970-01-01t00:00:00z") == 0)
        #expect(millis("1970-01-01T01:00:00+01:00") == 0)
        #expect(millis("1970-01-01T01:00:00+0100") == 0)
        #expect(millis("1970-01-01T01:00:00+01") == 0)
        #expect(millis("1969-12-31T23:30:00-00:30") == 0)
        #expect(millis("2024-02-29T12:34:56.789Z") == 1_709_210_096_789)
        #expect(millis("2024-02-29T12:34:56.7Z") == 1_709_210_096_700)
        #expect(millis("2024-02-29T12:34:56.123456789Z") == 1_709_210_096_123)
        #expect(millis("0001-01-01T00:00:00Z") == -62_135_596_800_000)
    }

    @Test func malformedStringsAreNotDates() {
        for text in ["", "2023-02-29T00:00:00Z", "2024-13-01T00:00:00Z", "2024-01-01T24:00:00Z", "2024-01-01T00:60:00Z",
                     "2024-01-01T00:00:60Z", "2024-01-01T00:00:00", "2024-01-01 00:00:00Z", "2024-01-01T00:00:00.Z",
                     "2024-01-01T00:00:00.1234567890Z", "2024-01-01T00:00:00Z ", "24-01-01T00:00:00Z", "2024-1-01T00:00:00Z",
                     "2024-01-01T00:00:00+25:00", "2024-01-01T00:00:00+01:6", "２０２４-01-01T00:00:00Z"] {
            #expect(ExtendedJSON.parseISODate(text) == nil, "\(text)")
        }
    }
}
