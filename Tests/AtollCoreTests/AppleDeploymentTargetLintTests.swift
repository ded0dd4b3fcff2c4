import Foundation
import Testing

/// A lint, not a compile: no Apple toolchain runs here, so nothing on this machine can build Atoll
/// for iOS 16 / macOS 13 and see an availability error. This is the strongest check it allows: it
/// reads the sources of the targets Apple apps link (Atoll, AtollCore, AtollRealmFile,
/// AtollAdminClient) and fails when an API that needs a newer OS than Package.swift declares
/// comes back unguarded, and when Package.swift stops declaring the deployment targets.
///
/// - `Synchronization` (`Mutex`, `Atomic`: macOS 15 / iOS 18): use AtollCore's `Locked` and
///   swift-atomics' `ManagedAtomic`.
/// - `UInt128` (macOS 15 / iOS 18): AtollCore's `U128`, or two `UInt64`s.
/// - `next(isolation:)`, `String(validating:as:)` (macOS 15 / iOS 18): only inside a declaration marked `@available` or an
///   `if #available` block.
/// - Observation (macOS 14 / iOS 17): `ObservationRegistrar`, `Observable` conformances and
///   `withObservationTracking` likewise.
///
/// Comments are ignored. docs/from-realm.md ("Apple platforms") lists what else is Apple-only.
@Suite struct AppleDeploymentTargetLintTests {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let appleLinkedTargets = ["Atoll", "AtollCore", "AtollRealmFile", "AtollAdminClient"]
    static let platforms = "platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1), .macCatalyst(.v16)]"

    /// Every Swift file of the Apple-linked targets: its path from the package root and its lines
    /// with comments removed.
    static func sources() throws -> [(path: String, lines: [String])] {
        var files: [(String, [String])] = []
        for target in appleLinkedTargets {
            let folder = packageRoot.appendingPathComponent("Sources/\(target)")
            guard let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil) else {
                Issue.record("no folder Sources/\(target)")
                continue
            }
            for case let url as URL in enumerator where url.pathExtension == "swift" {
                let text = try String(contentsOf: url, encoding: .utf8)
                let path = url.path.replacingOccurrences(of: packageRoot.path + "/", with: "")
                files.append((path, stripComments(text).components(separatedBy: "\n")))
            }
        }
        return files
    }

    /// `text` without `//` and `/* */` comments (string literals are kept; a `//` inside one ends
    /// the line early, which can only hide a use, never invent one).
    static func stripComments(_ text: String) -> String {
        var result = ""
        var inBlock = false
        for line in text.components(separatedBy: "\n") {
            var kept = ""
            var rest = Substring(line)
            while !rest.isEmpty {
                if inBlock {
                    guard let end = rest.range(of: "*/") else { rest = ""; break }
                    rest = rest[end.upperBound...]
                    inBlock = false
                } else if let start = rest.range(of: "/*"), rest.range(of: "//").map({ start.lowerBound < $0.lowerBound }) ?? true {
                    kept += rest[..<start.lowerBound]
                    rest = rest[start.upperBound...]
                    inBlock = true
                } else if let comment = rest.range(of: "//") {
                    kept += rest[..<comment.lowerBound]
                    rest = ""
                } else {
                    kept += rest
                    rest = ""
                }
            }
            result += kept + "\n"
        }
        return result
    }

    static func uses(of pattern: String, in files: [(path: String, lines: [String])]) throws -> [(path: String, line: Int)] {
        let regex = try NSRegularExpression(pattern: pattern)
        var found: [(String, Int)] = []
        for file in files {
            for (index, line) in file.lines.enumerated()
            where regex.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)) != nil {
                found.append((file.path, index + 1))
            }
        }
        return found
    }

    @Test func appleLinkedTargetsDoNotImportSynchronization() throws {
        let files = try Self.sources()
        #expect(!files.isEmpty)
        for use in try Self.uses(of: #"\bimport\s+Synchronization\b|\bSynchronization\.|(?<!Managed)\bAtomic<|\bMutex<"#, in: files) {
            Issue.record("\(use.path):\(use.line): Synchronization needs macOS 15 / iOS 18; use Locked or ManagedAtomic")
        }
    }

    @Test func appleLinkedTargetsDoNotUseUInt128() throws {
        for use in try Self.uses(of: #"\b(U|)Int128\b"#, in: try Self.sources()) {
            Issue.record("\(use.path):\(use.line): UInt128 needs macOS 15 / iOS 18; use U128")
        }
    }

    /// Whether line `index` sits in a declaration whose attributes (the `func`/`init`/`var` line or
    /// the three lines above it) say `@available(<system>`, or below an `#available(<system>` in the
    /// same declaration, for one of `systems` (e.g. `"macOS 15"`). Textual: an `#available` earlier
    /// in the declaration counts even where its block has ended; the Apple compiler is exact.
    static func isGuarded(_ lines: [String], _ index: Int, by systems: [String]) -> Bool {
        var cursor = index
        while cursor >= 0 {
            let text = lines[cursor]
            if systems.contains(where: { text.contains("#available(\($0)") }) { return true }
            if text.contains("func ") || text.contains("init(") || text.contains("extension ")
                || text.contains("var ") && text.contains("{") {
                return lines[max(0, cursor - 3)...cursor].contains { line in systems.contains { line.contains("@available(\($0)") } }
            }
            cursor -= 1
        }
        return false
    }

    /// `next(isolation:)` and `String(validating:as:)` are the standard library's from macOS 15 / iOS 18.
    @Test func macOS15APIsAreGuardedByAvailability() throws {
        for file in try Self.sources() {
            for (index, line) in file.lines.enumerated()
            where ["next(isolation:", "String(validating:"].contains(where: line.contains)
            && !Self.isGuarded(file.lines, index, by: ["macOS 15"]) {
                Issue.record("\(file.path):\(index + 1): needs macOS 15 / iOS 18; mark the declaration @available or guard it")
            }
        }
    }

    /// Observation needs macOS 14 / iOS 17: its registrar only in `Registrar`, behind availability,
    /// and every `Observable` conformance marked.
    @Test func observationIsMarkedAvailable() throws {
        for file in try Self.sources() {
            for (index, line) in file.lines.enumerated()
            where (line.contains("ObservationRegistrar") || line.range(of: #":\s*Observable\b"#, options: .regularExpression) != nil
                   || line.contains("withObservationTracking"))
            && !Self.isGuarded(file.lines, index, by: ["macOS 14", "macOS 15"]) {
                Issue.record("\(file.path):\(index + 1): Observation needs macOS 14 / iOS 17; mark the declaration @available or guard it")
            }
        }
    }

    /// `IndexPath(item:section:)`, `.section` and `.item` are UIKit's and AppKit's on Apple
    /// platforms, which Atoll does not import: its own code uses Foundation's `IndexPath(_:inSection:)`,
    /// `.sectionIndex` and `.itemIndex` (Results/IndexPath+Sections.swift, the one file that may).
    static let uikitIndexPathUse = #"\bIndexPath\((item|row):|\.(section|item)\b"#

    @Test func atollDoesNotUseUIKitsIndexPathMembers() throws {
        let files = try Self.sources().filter { !$0.path.hasSuffix("IndexPath+Sections.swift") }
        for use in try Self.uses(of: Self.uikitIndexPathUse, in: files) {
            let advice = "use IndexPath(_:inSection:), .sectionIndex, .itemIndex"
            Issue.record("\(use.path):\(use.line): IndexPath's item/section come from UIKit/AppKit on Apple platforms; \(advice)")
        }
    }

    /// A BSD-socket bootstrap (NIOPosix's `ClientBootstrap`) does not bring up cellular data or a
    /// VPN on iOS: the SDK's connections go through `WebSocketTransport.dial`, which picks
    /// Network.framework's bootstrap on Apple platforms, and nowhere else.
    static let socketBootstrapUse = #"\b(ClientBootstrap|NIOTSConnectionBootstrap)\("#

    @Test func sdkConnectionsGoThroughTheDialThatPicksNetworkFramework() throws {
        let files = try Self.sources()
        let uses = try Self.uses(of: Self.socketBootstrapUse, in: files)
        for use in uses where !use.path.hasSuffix("Sync/WebSocketTransport.swift") {
            Issue.record("\(use.path):\(use.line): open sockets with WebSocketTransport.dial (Network.framework on Apple platforms)")
        }
        #expect(uses.count == 2, "WebSocketTransport.dial has one bootstrap per platform: \(uses)")
        let manifest = try String(contentsOf: Self.packageRoot.appendingPathComponent("Package.swift"), encoding: .utf8)
        #expect(manifest.contains(#"url: "https://github.com/apple/swift-nio-transport-services""#))
        let product = try #require(manifest.range(of: #".product(name: "NIOTransportServices""#), "the Atoll target depends on NIOTransportServices")
        #expect(manifest[product.upperBound...].prefix(200).contains("condition: .when(platforms: apple)"))
    }

    @Test func packageDeclaresRealmAppsDeploymentTargets() throws {
        let manifest = try String(contentsOf: Self.packageRoot.appendingPathComponent("Package.swift"), encoding: .utf8)
        #expect(manifest.contains(Self.platforms), "Package.swift must declare \(Self.platforms)")
        #expect(manifest.contains(#"url: "https://github.com/apple/swift-atomics""#))
    }

    /// The lint itself: each rule finds what it is for.
    @Test func rulesCatchWhatTheyAreFor() throws {
        let planted = [(path: "planted.swift", lines: Self.stripComments("""
            import Synchronization // a comment naming UInt128
            let a = Atomic<Int>(0)
            let b = ManagedAtomic<Int>(0) /* UInt128 */
            let c: UInt128 = 1
            """).components(separatedBy: "\n"))]
        #expect(try Self.uses(of: #"\bimport\s+Synchronization\b|(?<!Managed)\bAtomic<|\bMutex<"#, in: planted).map(\.line) == [1, 2])
        #expect(try Self.uses(of: #"\b(U|)Int128\b"#, in: planted).map(\.line) == [4])
        let indexPaths = [(path: "planted.swift", lines: [
            "let a = IndexPath(item: 1, section: 0)", "let b = path.section", "let c = IndexPath(1, inSection: 0)",
            "let d = path.sectionIndex", "let e = IndexPath(row: 1, section: 0)", "let f = paths.map(\\.item)"])]
        #expect(try Self.uses(of: Self.uikitIndexPathUse, in: indexPaths).map(\.line) == [1, 2, 5, 6])
        let declarations = """
            extension Results: Observable {}
            @available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, *)
            extension List: Observable {}
            func read() {
                if #available(macOS 15.0, iOS 18.0, *) { _ = iterator.next(isolation: nil) }
            }
            func other() { _ = other.next(isolation: nil) }
            """.components(separatedBy: "\n")
        #expect(!Self.isGuarded(declarations, 0, by: ["macOS 14"]))
        #expect(Self.isGuarded(declarations, 2, by: ["macOS 14"]))
        #expect(Self.isGuarded(declarations, 4, by: ["macOS 15"]))
        #expect(!Self.isGuarded(declarations, 6, by: ["macOS 15"]))
    }
}
