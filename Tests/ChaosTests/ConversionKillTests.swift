import AtollTesting
import Foundation
import Testing

/// A process converting a file Realm wrote (`atoll-device open-realm-file`) killed with SIGKILL at
/// several points of the conversion: the original is as it was, and the next open converts it
/// whole (issue 22 §2).
@Suite(.serialized) struct ConversionKillTests {
    /// W9's file: 100,000 tasks, so the conversion lasts long enough to be cut.
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Benchmarks/tasks_w1_100k.realm.gz")

    /// Runs `atoll-device open-realm-file` on `path`; with `killAfter`, kills it that long after
    /// its conversion started (its work file appeared). Returns what it printed.
    static func open(_ path: String, killAfter: Duration?) throws -> String {
        let executable = try ServerProcess.locateBuiltExecutable(named: "atoll-device", environmentVariable: "ATOLL_DEVICE_EXECUTABLE")
        let child = Process()
        child.executableURL = executable
        child.arguments = ["open-realm-file", path, "1"]
        let output = Pipe()
        child.standardOutput = output
        try child.run()
        if let killAfter {
            let url = URL(fileURLWithPath: path)
            let work = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).atoll-conversion").path
            let deadline = ContinuousClock.now + .seconds(60)
            while !FileManager.default.fileExists(atPath: work), child.isRunning, ContinuousClock.now < deadline {
                Thread.sleep(forTimeInterval: 0.001)
            }
            Thread.sleep(forTimeInterval: Double(killAfter.components.attoseconds) / 1e18 + Double(killAfter.components.seconds))
            kill(child.processIdentifier, SIGKILL)
        }
        child.waitUntilExit()
        return String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    @Test(arguments: [0, 30, 150])
    func aConversionKilledMidwayLeavesTheOriginalAndTheNextOpenConvertsIt(_ milliseconds: Int) throws {
        let folder = try TemporaryFolder("conversion-kill")
        defer { folder.remove() }
        let path = folder.url.appendingPathComponent("default.realm").path
        try Gzip.decompress(Self.fixture, to: URL(fileURLWithPath: path))
        let original = try Data(contentsOf: URL(fileURLWithPath: path))

        let killed = try Self.open(path, killAfter: .milliseconds(milliseconds))
        if killed.contains("opened") {
            // Finished before the kill (a fast machine): nothing to check of a cut conversion.
            #expect(killed.contains("opened 100000"), "\(killed)")
            return
        }
        // Either untouched, or (killed after the rename that ends a conversion) the converted
        // file, with the original kept beside it.
        if try Data(contentsOf: URL(fileURLWithPath: path)) != original {
            #expect(try Data(contentsOf: URL(fileURLWithPath: path + ".before-atoll")) == original)
        }
        let reopened = try Self.open(path, killAfter: nil)
        #expect(reopened.contains("opened 100000"), "\(reopened)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path + ".before-atoll")) == original)
    }
}
