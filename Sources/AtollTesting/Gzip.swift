import Foundation

/// Compressed fixtures (`Benchmarks/*.gz`), unpacked with the system's `gzip`.
package enum Gzip {
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    /// Writes the decompressed contents of `source` to `destination`.
    package static func decompress(_ source: URL, to destination: URL) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["gzip", "-dc", source.path]
        FileManager.default.createFile(atPath: destination.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: destination)
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw Failure(description: "gzip -dc \(source.path) failed") }
    }
}
