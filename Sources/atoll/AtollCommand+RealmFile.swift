import ArgumentParser
import Atoll
import AtollRealmFile
import Foundation

/// `atoll realm-file`: look into a file written by Realm (realm-core), or convert it, without a server.
struct RealmFileCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "realm-file",
        abstract: "Look into a .realm file written by Realm, or convert it into an Atoll realm.",
        subcommands: [Inspect.self, Export.self, Convert.self])

    /// `--key`: the app's 64-byte encryption key, as 128 hexadecimal digits.
    struct KeyOption: ParsableArguments {
        @Option(name: .customLong("key"), help: "The file's 64-byte encryption key, as 128 hexadecimal digits.")
        var hex: String?

        var key: Data? {
            get throws {
                guard let hex else { return nil }
                let digits = Array(hex.filter { !$0.isWhitespace }.utf8)
                guard digits.count == 128, let bytes = Self.bytes(digits) else {
                    throw ValidationError("--key takes 128 hexadecimal digits (a 64-byte key); got \(digits.count) characters")
                }
                return Data(bytes)
            }
        }

        private static func bytes(_ digits: [UInt8]) -> [UInt8]? {
            func value(_ c: UInt8) -> UInt8? {
                switch c {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
                default: nil
                }
            }
            var bytes: [UInt8] = []
            for i in stride(from: 0, to: digits.count, by: 2) {
                guard let high = value(digits[i]), let low = value(digits[i + 1]) else { return nil }
                bytes.append(high << 4 | low)
            }
            return bytes
        }
    }

    struct Inspect: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Format and schema versions, classes with their properties and object counts, Realm's own tables.")
        @Argument(help: "The .realm file.") var file: String
        @OptionGroup var key: KeyOption
        func run() throws { print(try output()) }
        func output() throws -> String { try RealmFileReport.inspect(RealmFile(path: file, encryptionKey: key.key)) }
    }

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Objects as relaxed Extended JSON, one a line.",
            discussion: """
                With --class, each line is one object of that class. Without, every class's objects follow \
                each other, each line {"class": <name>, "object": <object>}. Links become the target's primary \
                key, embedded objects are inlined, other links are {"$link": {"class": …, "key": …}}.
                """)
        @Argument(help: "The .realm file.") var file: String
        @Option(name: .customLong("class"), help: "Only the objects of this class.") var className: String?
        @OptionGroup var key: KeyOption

        func run() throws { try export { print($0) } }

        func export(_ emit: (String) -> Void) throws {
            try RealmFileReport.export(RealmFile(path: file, encryptionKey: key.key), className: className, emit)
        }
    }

    struct Convert: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Writes an Atoll realm with the classes, objects and schema version of a file Realm wrote.",
            discussion: """
                The Realm file is not changed; the output must not exist. An encrypted file's copy is encrypted \
                with the same key. (An app does not need this: opening a Realm file converts it in place.)
                """)
        @Argument(help: "The .realm file Realm wrote.") var input: String
        @Argument(help: "The Atoll realm to write.") var output: String
        @OptionGroup var key: KeyOption
        @Flag(help: "No progress bar.") var quiet = false

        func run() throws {
            let bar = quiet ? nil : ProgressBar()
            try Realm.convertRealmFile(at: URL(fileURLWithPath: input), to: URL(fileURLWithPath: output),
                                       encryptionKey: key.key) { done, total in bar?.show(done, of: total) }
            bar?.finish()
            print("converted \(input) into \(output)")
        }
    }
}

/// A one-line progress bar on standard error, drawn only when it is a terminal.
struct ProgressBar {
    let isTerminal = isatty(STDERR_FILENO) == 1

    func show(_ done: Int, of total: Int) {
        guard isTerminal, total > 0 else { return }
        let width = 30
        let filled = min(width, done * width / total)
        let line = "\r[" + String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled) +
            "] \(done * 100 / total)% \(done)/\(total) objects"
        FileHandle.standardError.write(Data(line.utf8))
    }

    func finish() {
        if isTerminal { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}
