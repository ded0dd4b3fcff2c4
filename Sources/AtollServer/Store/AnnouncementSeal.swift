import Crypto
import Foundation

/// Authenticates the announcements the nodes on one PostgreSQL database send each other
/// (``StoreChange`` lines on the change channel): any role that may connect to the database may
/// also `NOTIFY` on it, so a line is acted on only when it carries an HMAC-SHA256 under a key only
/// the nodes hold, was sent within ``window`` and was not heard before (a replay of a genuine
/// "sessions ended" or "terminate" would otherwise end sessions again).
///
/// The key is derived (HKDF-SHA256) from the token secret, which every node of a deployment holds
/// anyway (configured, or shared through the database wrapped under the nodes' secret key).
struct AnnouncementSeal: Sendable {
    /// How far a line's send time may be from the receiver's clock (and how long its MAC is
    /// remembered against replays).
    static let window: Int64 = 60_000
    /// Why a line was not acted on (the label of the rejection counter in `/metrics`).
    enum Rejection: String, Sendable, Error {
        /// No MAC, or a line this version does not read.
        case unreadable
        /// A MAC that does not match: forged, or sent by a node with another token secret.
        case forged
        /// Sent outside ``window`` of this node's clock.
        case stale
        /// Heard before.
        case replayed
    }

    private let key: SymmetricKey

    init(tokenSecret: String) {
        key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: Data(tokenSecret.utf8)), info: Data("atoll node announcements v1".utf8),
            outputByteCount: 32)
    }

    /// `body` with its MAC in front: `mac TAB body`.
    func seal(_ body: String) -> String { mac(of: body) + "\t" + body }

    /// The body and MAC of a sealed line whose MAC is right.
    func open(_ line: String) -> Result<(mac: Substring, body: Substring), Rejection> {
        guard let tab = line.firstIndex(of: "\t") else { return .failure(.unreadable) }
        let mac = line[..<tab], body = line[line.index(after: tab)...]
        guard Secrets.constantTimeEqual(Array(mac.utf8), Array(self.mac(of: body).utf8)) else { return .failure(.forged) }
        return .success((mac, body))
    }

    private func mac(of body: some StringProtocol) -> String {
        Secrets.base64URL(HMAC<SHA256>.authenticationCode(for: Data(body.utf8), using: key))
    }
}

/// The MACs of the lines heard within ``AnnouncementSeal/window``: a line heard twice is a replay.
/// Bounded by ``capacity`` (the oldest are forgotten first: genuine traffic past it only widens
/// what an eavesdropper could replay, never what a forger can send).
struct AnnouncementReplayGuard: Sendable {
    static let capacity = 200_000
    private var seen: Set<String> = []
    private var order: [(mac: String, sentAt: Int64)] = []
    private var head = 0

    /// Nil when a line sent at `sentAt` with `mac` may be acted on at `now` (ms since 1970), which
    /// remembers it; the reason otherwise.
    mutating func admit(mac: Substring, sentAt: Int64, now: Int64) -> AnnouncementSeal.Rejection? {
        guard abs(now - sentAt) <= AnnouncementSeal.window else { return .stale }
        forget(before: now - AnnouncementSeal.window)
        // A copy: a substring would keep the whole line (up to 8 kB) alive.
        let mac = String(mac)
        guard seen.insert(mac).inserted else { return .replayed }
        order.append((mac, sentAt))
        if seen.count > Self.capacity { forgetOldest() }
        return nil
    }

    private mutating func forget(before oldest: Int64) {
        while head < order.count, order[head].sentAt < oldest { forgetOldest() }
    }

    private mutating func forgetOldest() {
        seen.remove(order[head].mac)
        head += 1
        if head > 1_024, head * 2 > order.count {
            order.removeFirst(head)
            head = 0
        }
    }
}
