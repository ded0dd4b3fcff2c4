import AtollServer
import Foundation

// The sync server's entry point. The server itself (HTTP auth, WebSocket sync, the SQLite store)
// is the next milestone; until it lands this says so plainly instead of pretending to serve.
FileHandle.standardError.write(Data("""
    atoll-server: the sync server is not implemented yet (sync protocol version \(AtollServer.protocolVersion) is planned).
    The local object store (import Atoll) works today; see README.md.

    """.utf8))
exit(EXIT_FAILURE)
