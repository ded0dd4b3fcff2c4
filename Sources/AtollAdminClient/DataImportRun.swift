import AtollCore
import Foundation

/// One run of `atoll data import`: a mongoexport file streamed in bounded batches to the admin
/// API, with a checkpoint after every batch the server acknowledged, so a killed run continues
/// where it stopped (`resume`) and a finished one leaves a report.
///
/// ```swift
/// let report = try await DataImportRun(client: admin, app: "tasks", type: "Task", file: url).run { print($0.read) }
/// ```
public struct DataImportRun: Sendable {
    public var client: AdminClient
    public var app: String
    public var type: String
    public var file: URL
    public var partitionKey: String?
    public var realm: String?
    /// A JSON array of Atoll object schemas to add first (`schema.json` of an export).
    public var schema: Data?
    /// Documents per batch (at most 2,000: the server's limit).
    public var batchSize = 500
    /// Bytes of documents per batch (the server takes 16 MB a request).
    public var maxBatchBytes = 8 << 20
    /// Continue from the checkpoint instead of the file's start.
    public var resume = false
    /// Stop after this many documents (the checkpoint says where): to try an import on a sample.
    public var limit: Int64?
    /// Set for a `mongodump` `.bson` file: turns one BSON document into its canonical Extended
    /// JSON (the tool passes AtollCore's `BSON.read`), which the server then types.
    public var bsonToExtendedJSON: (@Sendable ([UInt8]) throws -> String)?
    /// Where the checkpoint is kept; by default next to the file, `<file>.atoll-import.json`.
    public var checkpointFile: URL

    public init(client: AdminClient, app: String, type: String, file: URL) {
        self.client = client
        self.app = app
        self.type = type
        self.file = file
        checkpointFile = file.appendingPathExtension("atoll-import.json")
    }

    /// Where a run stopped: the byte after the last document the server acknowledged, and the
    /// counts so far.
    public struct Checkpoint: Codable, Sendable, Hashable {
        public var offset: Int64 = 0
        public var isArray: Bool?
        public var report = DataImportReport()
    }

    /// Runs the import; `progress` after every batch. The checkpoint is removed when the file is done.
    ///
    /// One batch is on its way to the server while the next is read and framed (a compact body,
    /// ``DataImportBody``: the documents' bytes as the file has them); the checkpoint moves only
    /// past batches the server acknowledged, in file order, so a run killed at any point resumes
    /// at the first batch not acknowledged (sending it again is harmless: its `_id`s overwrite).
    @discardableResult
    public func run(progress: (DataImportReport) -> Void = { _ in }) async throws -> DataImportReport {
        var checkpoint = Checkpoint()
        if resume {
            guard let data = try? Data(contentsOf: checkpointFile) else {
                throw AdminClientError(status: 0, message: "no checkpoint at \(checkpointFile.path): nothing to resume")
            }
            checkpoint = try JSONDecoder().decode(Checkpoint.self, from: data)
            checkpoint.report.resumedAt = checkpoint.offset
        }
        let handle = try FileHandle(forReadingFrom: file)
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(checkpoint.offset))
        var splitter = DocumentSplitter(startingAt: checkpoint.offset, isArray: checkpoint.isArray)
        var bsonSplitter = BSONSplitter(startingAt: checkpoint.offset)
        let header = try AdminClient.importHeader(type: type, partitionKey: partitionKey, realm: realm, schema: schema)

        /// A batch being read, or sent: its body, the numbers of its documents in the file, and
        /// what was read and refused here (counted when the batch is acknowledged).
        struct Batch {
            var body: DataImportBody.Writer
            var numbers: [Int64] = []
            var local = DataImportReport()
            var end: Int64
            var isArray: Bool?
        }
        func newBatch(at end: Int64) -> Batch {
            Batch(body: DataImportBody.Writer(header: header, reservingCapacity: min(maxBatchBytes, 1 << 20)), end: end)
        }
        var batch = newBatch(at: checkpoint.offset)
        var read = checkpoint.report.read
        var inFlight: (batch: Batch, answer: Task<AdminClient.ImportBatchResult, any Error>?)?
        defer { inFlight?.answer?.cancel() }
        var sent: Int64 = 0
        var stopped = false

        // Waits for the batch on its way and moves the checkpoint past it.
        func settle() async throws {
            guard let (sent, answer) = inFlight else { return }
            inFlight = nil
            checkpoint.report.merge(sent.local)
            if let answer { checkpoint.report.absorb(try await answer.value, numbers: sent.numbers) }
            checkpoint.offset = sent.end
            checkpoint.isArray = sent.isArray
            try JSONEncoder().encode(checkpoint).write(to: checkpointFile, options: .atomic)
            progress(checkpoint.report)
        }
        // Sends the batch read so far (after the one before it was acknowledged).
        func flush() async throws {
            guard batch.body.count > 0 || batch.local.read > 0 else { return }
            batch.isArray = splitter.isArrayFile
            let ready = batch
            batch = newBatch(at: batch.end)
            try await settle()
            try Task.checkCancellation()
            let client = self.client, app = self.app, body = ready.body.finish()
            let answer = ready.body.count == 0 ? nil : Task { try await client.importBatch(app: app, body: body) }
            inFlight = (ready, answer)
        }

        reading: while true {
            try Task.checkCancellation()
            let chunk = try handle.read(upToCount: 1 << 20) ?? Data()
            let pieces: [DocumentSplitter.Piece]
            do {
                pieces = chunk.isEmpty ? [] : bsonToExtendedJSON != nil ? try bsonSplitter.feed(chunk) : try splitter.feed(chunk)
            } catch {
                try await flush()
                try await settle()
                throw AdminClientError(status: 0, message: "\(file.lastPathComponent): \(error)")
            }
            for piece in pieces {
                read += 1
                batch.local.read = read
                if piece.bytes.isEmpty {
                    batch.local.refuse(read, code: "tooLarge", message: "the document is larger than \(splitter.maxDocumentBytes) bytes")
                } else if let convert = bsonToExtendedJSON {
                    do {
                        batch.body.append(try convert(piece.bytes).utf8)
                        batch.numbers.append(read)
                    } catch {
                        batch.local.refuse(read, code: "malformedBSON", message: "\(error)")
                    }
                } else {
                    // UTF-8 and JSON are the server's to check, where it parses the document.
                    batch.body.append(piece.bytes)
                    batch.numbers.append(read)
                }
                batch.end = piece.end
                if batch.body.count >= batchSize || batch.body.documentBytes >= maxBatchBytes { try await flush() }
                sent += 1
                if let limit, sent >= limit { stopped = true; break reading }
            }
            if chunk.isEmpty { break }
        }
        if !stopped {
            do { if bsonToExtendedJSON != nil { try bsonSplitter.finish() } else { try splitter.finish() } } catch {
                try await flush()
                try await settle()
                throw AdminClientError(status: 0, message: "\(file.lastPathComponent): \(error)")
            }
            batch.end = max(batch.end, bsonToExtendedJSON != nil ? bsonSplitter.offset : splitter.offset)
        }
        try await flush()
        try await settle()
        checkpoint.report.finished = !stopped
        if stopped {
            try JSONEncoder().encode(checkpoint).write(to: checkpointFile, options: .atomic)
        } else {
            try? FileManager.default.removeItem(at: checkpointFile)
        }
        return checkpoint.report
    }
}

/// What an import did: nothing read is left out of it.
public struct DataImportReport: Codable, Sendable, Hashable, CustomStringConvertible {
    public struct Refusal: Codable, Sendable, Hashable {
        /// The document's number in the file, from 1.
        public var document: Int64
        public var code: String
        public var message: String
    }
    public var read: Int64 = 0
    public var imported: Int64 = 0
    public var refusedCount: Int64 = 0
    /// The first refusals (at most 1,000 kept; ``refusedCount`` counts them all).
    public var refused: [Refusal] = []
    public var unresolvedLinks: Int64 = 0
    /// The first unresolved links, as `Type _id (document n)`.
    public var unresolvedSamples: [String] = []
    public var ignoredFields: [String: Int64] = [:]
    public var realms: Set<String> = []
    /// The byte offset a resumed run started at.
    public var resumedAt: Int64?
    /// Whether the whole file was read.
    public var finished = false

    public init() {}

    mutating func refuse(_ document: Int64, code: String, message: String) {
        refusedCount += 1
        if refused.count < 1_000 { refused.append(Refusal(document: document, code: code, message: message)) }
    }

    /// Takes in what a batch read and refused before it was sent (`local.read`: its last document's number).
    mutating func merge(_ local: DataImportReport) {
        read = max(read, local.read)
        refusedCount += local.refusedCount
        refused += local.refused.prefix(max(0, 1_000 - refused.count))
    }

    mutating func absorb(_ result: AdminClient.ImportBatchResult, numbers: [Int64]) {
        imported += Int64(result.imported)
        for r in result.refused where numbers.indices.contains(r.index) {
            refuse(numbers[r.index], code: r.code, message: r.path.isEmpty ? r.message : "\(r.path): \(r.message)")
        }
        unresolvedLinks += Int64(result.unresolvedLinks.count)
        for link in result.unresolvedLinks.prefix(max(0, 100 - unresolvedSamples.count)) where numbers.indices.contains(link.index) {
            unresolvedSamples.append("\(link.type) \(link.id) (document \(numbers[link.index]))")
        }
        for (field, count) in result.ignoredFields { ignoredFields[field, default: 0] += Int64(count) }
        realms.formUnion(result.realms)
    }

    public var description: String {
        var lines = ["read \(read), imported \(imported), refused \(refusedCount)" + (resumedAt.map { " (resumed at byte \($0))" } ?? "")]
        for r in refused { lines.append("  refused document \(r.document): \(r.code): \(r.message)") }
        if refusedCount > Int64(refused.count) { lines.append("  … and \(refusedCount - Int64(refused.count)) more") }
        if unresolvedLinks > 0 {
            lines.append("unresolved links \(unresolvedLinks) (kept; they resolve when their target is imported):")
            for s in unresolvedSamples { lines.append("  \(s)") }
        }
        for (field, count) in ignoredFields.sorted(by: { $0.key < $1.key }) {
            lines.append("field \(field) is not in the schema: left out of \(count) document(s)")
        }
        if !realms.isEmpty { lines.append("realms: \(realms.sorted().joined(separator: ", "))") }
        return lines.joined(separator: "\n")
    }
}
