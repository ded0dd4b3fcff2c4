import Foundation
import Testing

/// docs/architecture.md names the code it describes in backticks; this keeps those names true.
/// A span naming a type (`ClientSession`, `ClientSession.Action`, `Realm+Add`) must be a type
/// declared in Sources/ or the name of a source file; a member after it (`IdentPolicy.decide(…)`)
/// must be declared somewhere; a path (`AtollCore/Values/WallClock.swift`, `Sync/`,
/// `Storage/RealmFormatConversion`) must exist under the package, Sources/ or a target of it; a
/// document it points to (docs/merge.md) must exist. Commands, JSON and other code in backticks
/// (lowercase first, or with spaces) are not checked.
@Suite struct ArchitectureDocTests {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Every Swift file under Sources/: its path from the package root, and its text.
    static func sources() throws -> [(path: String, text: String)] {
        let sources = packageRoot.appendingPathComponent("Sources")
        guard let walker = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil) else { return [] }
        var files: [(String, String)] = []
        for case let url as URL in walker where url.pathExtension == "swift" {
            files.append((String(url.path.dropFirst(packageRoot.path.count + 1)), try String(contentsOf: url, encoding: .utf8)))
        }
        return files
    }

    /// What a backtick span names, or nil when it is not a name this test checks.
    enum Name: Equatable {
        case path(String)
        /// A file named without its folder (`SessionEngine+Actions.swift`, `Package.swift`).
        case file(String)
        case type(String, member: String?)
    }

    static func name(_ span: String) -> Name? {
        guard !span.contains(" "), let first = span.unicodeScalars.first else { return nil }
        if span.contains("/") {
            // A path; `apps/:app/…` routes and URLs are not.
            guard !span.contains(":"), !span.hasPrefix("-") else { return nil }
            return .path(span)
        }
        guard CharacterSet.uppercaseLetters.contains(first) else { return nil }
        if span.hasSuffix(".swift") { return .file(span) }
        // SQL and other capitals (`COMMIT`, `WAL`) are not names of the code.
        if span == span.uppercased() { return nil }
        // `Type`, `Type.member`, `Type.member(label:)`, `Type+Extension`.
        let head = span.prefix { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "+" }
        var rest = span.dropFirst(head.count)
        var member: String?
        if rest.first == "." {
            rest = rest.dropFirst()
            let name = rest.prefix { $0.isLetter || $0.isNumber || $0 == "_" }
            if !name.isEmpty { member = String(name) }
        }
        return .type(String(head), member: member)
    }

    static func spans(in markdown: String) -> [String] {
        var spans: [String] = []
        var inFence = false
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inFence.toggle(); continue }
            guard !inFence else { continue }
            let parts = line.split(separator: "`", omittingEmptySubsequences: false)
            for (index, part) in parts.enumerated() where index % 2 == 1 { spans.append(String(part)) }
        }
        return spans
    }

    @Test func everyTypeFileAndPathTheArchitectureNamesExists() throws {
        let doc = try String(contentsOf: Self.packageRoot.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
        let files = try Self.sources()
        let fileNames = Set(files.map { URL(fileURLWithPath: $0.path).deletingPathExtension().lastPathComponent })
        let allText = files.map(\.text).joined(separator: "\n")
        let declared = Self.declaredNames(in: allText)
        let targets = try FileManager.default.contentsOfDirectory(atPath: Self.packageRoot.appendingPathComponent("Sources").path)
            + FileManager.default.contentsOfDirectory(atPath: Self.packageRoot.appendingPathComponent("Tests").path)
        let fileNamesWithExtension = Set(files.map { URL(fileURLWithPath: $0.path).lastPathComponent })

        var missing: [String] = []
        for span in Set(Self.spans(in: doc)).sorted() {
            switch Self.name(span) {
            case .path(let path):
                let trimmed = path.hasSuffix("/") ? String(path.dropLast()) : path
                let candidates = [trimmed, "Sources/" + trimmed] + targets.map { "Sources/\($0)/\(trimmed)" }
                let exists = candidates.contains { candidate in
                    [candidate, candidate + ".swift"].contains { FileManager.default.fileExists(atPath: Self.packageRoot.appendingPathComponent($0).path) }
                }
                if !exists { missing.append("path `\(span)`") }
            case .file(let name):
                let exists = fileNamesWithExtension.contains(name)
                    || FileManager.default.fileExists(atPath: Self.packageRoot.appendingPathComponent(name).path)
                if !exists { missing.append("file `\(span)`") }
            case .type(let type, let member):
                if !declared.types.contains(type) && !fileNames.contains(type) && !targets.contains(type) {
                    missing.append("type or file `\(span)`")
                } else if let member, !declared.members.contains(member), !declared.types.contains(member) {
                    missing.append("member `\(span)`")
                }
            case nil:
                continue
            }
        }
        // Documents it points to.
        let linked = doc.matches(of: /docs\/[a-z0-9-]+\.md|[A-Z]+\.md/).map { String(doc[$0.range]) }
        for document in Set(linked).sorted() where !FileManager.default.fileExists(atPath: Self.packageRoot.appendingPathComponent(document).path) {
            missing.append("document \(document)")
        }
        #expect(missing.isEmpty, "docs/architecture.md names what does not exist: \(missing.joined(separator: ", "))")
    }

    /// Type names (`struct X`, `typealias X` …) and member names (`func x`, `var x`, `case x` …)
    /// declared in `text`.
    static func declaredNames(in text: String) -> (types: Set<String>, members: Set<String>) {
        var types = Set<String>()
        var members = Set<String>()
        for match in text.matches(of: /(?:struct|class|enum|actor|protocol|typealias|extension)\s+(?:[A-Za-z0-9_]+\.)*([A-Za-z_][A-Za-z0-9_]*)/) {
            types.insert(String(match.output.1))
        }
        for match in text.matches(of: /(?:func|var|let|case|init)\s+`?([A-Za-z_][A-Za-z0-9_]*)/) {
            members.insert(String(match.output.1))
        }
        return (types, members)
    }

    @Test func theCheckRecognisesWhatItChecks() {
        #expect(Self.name("ClientSession.Action") == .type("ClientSession", member: "Action"))
        #expect(Self.name("IdentPolicy.decide(_:facts:now:)") == .type("IdentPolicy", member: "decide"))
        #expect(Self.name("Realm+Add") == .type("Realm+Add", member: nil))
        #expect(Self.name("SessionEngine+Actions.swift") == .file("SessionEngine+Actions.swift"))
        #expect(Self.name("COMMIT") == nil)
        #expect(Self.name("AtollCore/Values/WallClock.swift") == .path("AtollCore/Values/WallClock.swift"))
        #expect(Self.name("atoll data import") == nil)
        #expect(Self.name("PUT apps/:app/configuration") == nil)
        #expect(Self.name(".send") == nil)
        #expect(Self.spans(in: "a `X` b `y z`\n```\n`Z`\n```\n`W`") == ["X", "y z", "W"])
    }
}

extension ArchitectureDocTests {
    /// AtollCore's public types are exactly those docs/architecture.md lists ("What is public"):
    /// a type made public for convenience shows up here, and so does one the list forgot.
    @Test func atollCoresPublicTypesAreTheListedOnes() throws {
        let document = try String(contentsOf: Self.packageRoot.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
        let marker = "Public types of AtollCore (ArchitectureDocTests compares this line with the code):"
        let lines = document.split(separator: "\n", omittingEmptySubsequences: false)
        let index = try #require(lines.firstIndex { $0.contains(marker) }, "docs/architecture.md lost the line of AtollCore's public types")
        let listed = Set(Self.spans(in: String(lines[index + 1])))
        let declaration = try Regex(#"^(?:@\w+(?:\([^)]*\))?\s+)*public\s+(?:final\s+|indirect\s+)*(?:struct|class|enum|protocol|typealias|actor)\s+(\w+)"#)
        var declared: Set<String> = []
        for (path, text) in try Self.sources() where path.hasPrefix("Sources/AtollCore/") {
            for line in text.split(separator: "\n") {
                if let match = try declaration.firstMatch(in: String(line)), let name = match.output[1].substring {
                    declared.insert(String(name))
                }
            }
        }
        #expect(declared.count > 10, "the scan found \(declared.count) public types: it no longer reads the sources")
        #expect(declared.subtracting(listed).sorted() == [], "public in AtollCore but not listed (make it package, or list it and say why)")
        #expect(listed.subtracting(declared).sorted() == [], "listed but not public in AtollCore")
    }
}
