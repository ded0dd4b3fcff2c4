import AtollCore
import Foundation

/// What function calls keep in memory: calls in flight per user and per app, and the webhook
/// client they go through (its own, so slow functions never hold up confirmation mails).
final class FunctionCalls: Sendable {
    let webhooks: WebhookClient
    private let inFlight = Locked<[String: Int]>([:])

    init(webhooks: WebhookClient = WebhookClient(maxAnswerBytes: 1 << 20, maxInFlight: 256)) {
        self.webhooks = webhooks
    }

    /// Counts a call of `userID` in `appID` in flight, unless the user or the app is at its limit.
    /// Every admitted call is given back with ``finish(appID:userID:)``.
    func admit(appID: String, userID: String, perUser: Int, perApp: Int) -> Bool {
        let (userKey, appKey) = ("u/\(appID)/\(userID)", "a/\(appID)")
        return inFlight.withLock { counts in
            guard counts[userKey, default: 0] < perUser, counts[appKey, default: 0] < perApp else { return false }
            counts[userKey, default: 0] += 1
            counts[appKey, default: 0] += 1
            return true
        }
    }

    func finish(appID: String, userID: String) {
        inFlight.withLock { counts in
            for key in ["u/\(appID)/\(userID)", "a/\(appID)"] {
                let left = counts[key, default: 1] - 1
                counts[key] = left > 0 ? left : nil
            }
        }
    }
}
