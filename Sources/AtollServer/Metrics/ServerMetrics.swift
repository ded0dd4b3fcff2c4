import CoreMetrics
import Prometheus

/// The server's metrics, kept in its own Prometheus registry (so servers in one process do not mix their
/// numbers) and served as text at `GET /metrics`.
///
/// ```swift
/// metrics.countLogin(provider: .anonymous, succeeded: true)
/// let text = metrics.exposition() // "# TYPE atoll_logins_total counter…"
/// ```
package final class ServerMetrics: Sendable {
    /// The registry every metric of this server lives in.
    package let registry: PrometheusCollectorRegistry
    /// A swift-metrics factory writing into ``registry``, for code that uses the swift-metrics API.
    package let factory: any MetricsFactory

    /// Sync sessions open now (the WebSocket endpoint keeps it; 0 until sync lands).
    package let activeSessions: Prometheus.Gauge
    /// Changesets received from clients.
    package let uploads: Prometheus.Counter
    /// Changesets sent to clients.
    package let downloads: Prometheus.Counter
    /// How long integrating one uploaded changeset takes.
    package let integrationLatency: Prometheus.DurationHistogram
    /// How long the store takes to answer a trivial query (checked every few seconds).
    package let storeLatency: Prometheus.DurationHistogram
    /// With several nodes: from another node's commit to this node hearing of it.
    package let notificationLag: Prometheus.DurationHistogram
    /// Evaluations of a flexible-sync query set over a realm's state (one per distinct set and
    /// server version, shared by the sessions that have it).
    package let queryEvaluations: Prometheus.Counter
    /// History announcements heard, by outcome (``countHistoryAnnouncement(_:)``): made once, as
    /// they are counted for every line of every node.
    let announcementsSkipped: Prometheus.Counter
    let announcementsOwn: Prometheus.Counter
    let announcementsRead: Prometheus.Counter

    static let latencyBuckets: [Duration] = [
        .microseconds(100), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5),
        .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
        .milliseconds(500), .seconds(1), .seconds(5),
    ]

    package init() {
        let registry = PrometheusCollectorRegistry()
        self.registry = registry
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = Self.latencyBuckets
        self.factory = factory
        activeSessions = registry.makeGauge(
            descriptor: Self.name("sync_sessions", unit: "active", help: "Sync sessions open now."))
        activeSessions.set(to: 0)
        uploads = registry.makeCounter(
            descriptor: Self.name("sync_uploads", unit: "total", help: "Changesets received from clients."))
        downloads = registry.makeCounter(
            descriptor: Self.name("sync_downloads", unit: "total", help: "Changesets sent to clients."))
        queryEvaluations = registry.makeCounter(
            descriptor: Self.name("sync_query_evaluations", unit: "total",
                                  help: "Evaluations of a flexible-sync query set, one per distinct set and server version."))
        let announcements = { (outcome: String) in
            registry.makeCounter(
                descriptor: Self.name("store_history_announcements", unit: "total",
                                      help: "History announcements heard from the other nodes, by outcome: skipped (a realm not served here) and own are dropped unread."),
                labels: [("outcome", outcome)])
        }
        announcementsSkipped = announcements("skipped")
        announcementsOwn = announcements("own")
        announcementsRead = announcements("read")
        integrationLatency = registry.makeDurationHistogram(
            descriptor: Self.name(
                "sync_integration_duration", unit: "seconds", help: "Time to integrate one uploaded changeset."),
            buckets: Self.latencyBuckets)
        storeLatency = registry.makeDurationHistogram(
            descriptor: Self.name("store_check_duration", unit: "seconds", help: "Time the store takes to answer SELECT 1."),
            buckets: Self.latencyBuckets)
        notificationLag = registry.makeDurationHistogram(
            descriptor: Self.name(
                "store_notification_lag", unit: "seconds", help: "Time from another node's commit to this node hearing of it."),
            buckets: Self.latencyBuckets)
    }

    /// Counts one answered HTTP request; `route` is the route's pattern (`/api/client/v1/auth/session`),
    /// never the raw path, so ids do not multiply the series.
    package func countRequest(route: String, method: String, status: Int) {
        registry.makeCounter(
            descriptor: Self.name("http_requests", unit: "total", help: "HTTP requests answered, by route, method and status."),
            labels: [("route", route), ("method", method), ("status", String(status))]
        ).increment()
    }

    /// Counts one change notification ignored because it is not authentic: `reason` is
    /// `unreadable`, `forged`, `stale` or `replayed` (``AnnouncementSeal``).
    package func countRejectedNotification(reason: String) {
        registry.makeCounter(
            descriptor: Self.name("store_notifications_rejected", unit: "total",
                                  help: "Change notifications ignored as not from a node of this deployment, by reason."),
            labels: [("reason", reason)]
        ).increment()
    }

    /// Counts one history announcement heard from the nodes' change channel: `outcome` is
    /// `skipped` (a realm not served here, dropped unread), `own` (this node's, dropped unread) or
    /// `read` (checked and acted on) (``RealmInterest``).
    package func countHistoryAnnouncement(_ outcome: String) {
        (outcome == "skipped" ? announcementsSkipped : outcome == "own" ? announcementsOwn : announcementsRead).increment()
    }

    /// Counts one read of a realm's history for downloads: `for` is `session` (one session
    /// catching up) or `node` (what another node appended, read once for every session here).
    package func countHistoryRead(for reader: String) {
        registry.makeCounter(
            descriptor: Self.name("sync_history_reads", unit: "total",
                                  help: "History reads for downloads: by one session, or once per node for another node's writes."),
            labels: [("for", reader)]
        ).increment()
    }

    /// Counts one login attempt through `provider`.
    package func countLogin(provider: AuthProvider, succeeded: Bool) {
        registry.makeCounter(
            descriptor: Self.name("logins", unit: "total", help: "Login attempts, by auth provider and outcome."),
            labels: [("provider", provider.rawValue), ("outcome", succeeded ? "success" : "failure")]
        ).increment()
    }

    /// Counts one request, connection, session or login refused by a configured limit
    /// (``ServerConfiguration/Limits``), by the limit's name.
    package func countRefusal(limit: String) {
        registry.makeCounter(
            descriptor: Self.name("limit_refusals", unit: "total", help: "Requests refused by a configured limit, by limit."),
            labels: [("limit", limit)]
        ).increment()
    }

    /// `atoll_<name>_<unit>`.
    static func name(_ name: String, unit: String, help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "atoll", metricName: name, unitName: unit, helpText: help)
    }

    /// The registry in the Prometheus text format.
    package func exposition() -> String {
        registry.emitToString()
    }
}
