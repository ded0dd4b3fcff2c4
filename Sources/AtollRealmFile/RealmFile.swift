import Foundation

/// A Realm file opened read-only: its header, its tables and their objects.
///
/// The file is memory-mapped and never written. All reads are validated against the file's bounds; a damaged
/// file produces `RealmFileError`, never a crash. An encrypted file (Realm's `encryptionKey`) is authenticated
/// and decrypted into memory when it is opened.
public final class RealmFile: Sendable {
    /// File format version of the selected top ref (Realm writes 20–24 for the formats read here).
    public let formatVersion: Int
    /// Offset of the group's top array, or 0 for an empty file.
    public let topRef: UInt64
    /// Whether the file is in streaming form (top ref in a footer, as written by `writeCopy`).
    public let isStreamingForm: Bool
    /// The tables of the file, in the file's order.
    public let tables: [RealmTable]
    /// The object-store schema version kept in the `metadata` table, or nil when absent or unversioned.
    public let schemaVersion: UInt64?

    /// File format versions this reader decodes.
    public static let supportedFormatVersions: ClosedRange<Int> = 20...24

    /// Size of the key of an encrypted Realm file: Realm's 64-byte `encryptionKey`.
    public static let encryptionKeySize = RealmEncryption.keySize

    /// Opens the Realm file at `path` read-only.
    ///
    /// - Parameter encryptionKey: the 64-byte key the file was encrypted with (Realm's `encryptionKey`), or nil
    ///   for an unencrypted file. An encrypted file is decrypted page by page as it is read (a small cache of
    ///   pages, never the whole file).
    public convenience init(path: String, encryptionKey: Data? = nil) throws(RealmFileError) {
        let mapped = try MappedBytes.map(path: path)
        try self.init(bytes: encryptionKey.map { key throws(RealmFileError) in try Self.decrypt(mapped, key: key) } ?? mapped)
    }

    /// Reads a Realm file held in memory (the bytes are copied once; an encrypted file is decrypted instead).
    public convenience init(data: Data, encryptionKey: Data? = nil) throws(RealmFileError) {
        guard let encryptionKey else {
            try self.init(bytes: MappedBytes.copy(data))
            return
        }
        try self.init(bytes: RealmEncryption.decrypt(MappedBytes.copy(data), key: encryptionKey))
    }

    private static func decrypt(_ mapped: MappedBytes, key: Data) throws(RealmFileError) -> MappedBytes {
        try RealmEncryption.decrypt(mapped, key: key)
    }

    private init(bytes: MappedBytes) throws(RealmFileError) {
        let header = try FileHeader(bytes)
        formatVersion = header.formatVersion
        topRef = header.topRef
        isStreamingForm = header.isStreamingForm
        let reader = NodeReader(bytes: bytes)
        let group = GroupReader(reader: reader, topRef: header.topRef, formatVersion: header.formatVersion)
        tables = try group.tables()
        schemaVersion = try Self.readSchemaVersion(tables)
    }

    /// The table stored under `name` (with its `class_` prefix, if any) or, failing that, with class name `name`.
    public func table(named name: String) throws(RealmFileError) -> RealmTable {
        if let table = tables.first(where: { $0.name == name }) ?? tables.first(where: { $0.className == name && $0.isClassTable }) {
            return table
        }
        throw .notFound("table \(name)")
    }

    /// Tables that hold Realm object classes (`class_` prefix), keyed by class name.
    public var classTables: [RealmTable] { tables.filter(\.isClassTable) }

    private static func readSchemaVersion(_ tables: [RealmTable]) throws(RealmFileError) -> UInt64? {
        guard let metadata = tables.first(where: { $0.name == "metadata" }),
              metadata.columns.contains(where: { $0.name == "version" && $0.type == .int && $0.collection == .single })
        else { return nil }
        var cursor = metadata.objects()
        guard let first = try cursor.next(), let version = first["version"]?.intValue else { return nil }
        // Realm marks an unversioned file with all bits set.
        return version == -1 ? nil : UInt64(bitPattern: version)
    }
}

/// The 24-byte file header (and, in streaming form, the 16-byte footer).
struct FileHeader {
    let topRef: UInt64
    let formatVersion: Int
    let isStreamingForm: Bool

    static let size = 24
    static let footerSize = 16
    static let footerCookie: UInt64 = 0x3034_1252_37E5_26C8

    init(_ bytes: MappedBytes) throws(RealmFileError) {
        let size = bytes.count
        guard size >= Self.size else { throw .invalidDatabase(reason: "file is too small (\(size) bytes) to be a Realm file") }
        try bytes.checkReadable(0, Self.size)
        guard bytes.byte(at: 16) == UInt8(ascii: "T"), bytes.byte(at: 17) == UInt8(ascii: "-"),
              bytes.byte(at: 18) == UInt8(ascii: "D"), bytes.byte(at: 19) == UInt8(ascii: "B") else {
            if RealmEncryption.looksEncrypted(UnsafeRawBufferPointer(start: bytes.base, count: size)) {
                throw .invalidDatabase(reason: "no T-DB mnemonic, and the file has the layout of an encrypted Realm file: it is encrypted, open it with its 64-byte encryption key")
            }
            throw .invalidDatabase(reason: "no T-DB mnemonic: not a Realm file, an encrypted Realm file, or corrupted")
        }
        guard size % 8 == 0 else { throw .invalidDatabase(reason: "file size \(size) is not a multiple of 8 (truncated?)") }
        let selector = Int(bytes.byte(at: 23) & 1)
        var ref = bytes.uint(at: selector * 8, size: 8)
        var streaming = false
        if selector == 0 && ref == UInt64.max {
            guard size >= Self.size + Self.footerSize else {
                throw .invalidDatabase(reason: "streaming-form file too small for its footer")
            }
            try bytes.checkReadable(size - Self.footerSize, Self.footerSize)
            guard bytes.uint(at: size - 8, size: 8) == Self.footerCookie else {
                throw .invalidDatabase(reason: "streaming-form file without a valid footer (truncated?)")
            }
            ref = bytes.uint(at: size - 16, size: 8)
            streaming = true
        }
        guard ref % 8 == 0 else { throw .invalidDatabase(reason: "top ref \(ref) is not 8-byte aligned") }
        guard ref < UInt64(size) else { throw .invalidDatabase(reason: "top ref \(ref) is outside the file (\(size) bytes): truncated?") }
        let version = Int(bytes.byte(at: 20 + selector))
        if ref != 0 || version != 0 {
            if version < RealmFile.supportedFormatVersions.lowerBound {
                throw .unsupportedFormat(version: version, hint: "this file predates Realm 10; open it with Realm Swift 10.x or later first so it is upgraded to format 20 or newer")
            }
            if version > RealmFile.supportedFormatVersions.upperBound {
                throw .unsupportedFormat(version: version, hint: "written by a Realm newer than this reader knows (formats 20–24)")
            }
        }
        topRef = ref
        formatVersion = version
        isStreamingForm = streaming
    }
}
