extension FaultProxy {
    /// Which way bytes travel through the proxy.
    package enum Direction: Sendable, Hashable, CaseIterable, CustomStringConvertible {
        case clientToServer
        case serverToClient

        package var description: String { self == .clientToServer ? "client→server" : "server→client" }
    }

    /// What the proxy does to the bytes of one direction. Frame faults (`duplicate`, `reorder`,
    /// `cutMidFrame`) act on whole WebSocket frames after an upgrade; the others act on every
    /// connection. Probabilities are per frame, in 0...1.
    ///
    /// ```swift
    /// proxy.set(.init(delay: .milliseconds(50), duplicate: 0.1), for: .clientToServer)
    /// ```
    package struct Faults: Sendable, Hashable, CustomStringConvertible {
        /// Bytes are forwarded.
        package static let none = Faults()

        /// What `drop` does with the bytes of a direction.
        package enum Drop: Sendable, Hashable {
            /// Forward them.
            case none
            /// Discard them silently, the connection staying open: whole frames on a WebSocket
            /// (the framing stays valid), raw bytes before it.
            case discard
            /// Close the connection instead of forwarding them (new connections too, at their
            /// first bytes).
            case close
        }

        package var drop: Drop
        /// Latency added to every chunk (order is kept).
        package var delay: Duration
        /// The chance that a frame is sent twice.
        package var duplicate: Double
        /// The chance that a frame is held back and sent after the next one.
        package var reorder: Double
        /// The chance that part of a frame is sent and then the connection closed.
        package var cutMidFrame: Double

        package init(drop: Drop = .none, delay: Duration = .zero, duplicate: Double = 0, reorder: Double = 0,
                    cutMidFrame: Double = 0) {
            self.drop = drop
            self.delay = delay
            self.duplicate = duplicate
            self.reorder = reorder
            self.cutMidFrame = cutMidFrame
        }

        package var description: String {
            var parts: [String] = []
            if drop != .none { parts.append("drop \(drop)") }
            if delay > .zero { parts.append("delay \(delay)") }
            if duplicate > 0 { parts.append("duplicate \(duplicate)") }
            if reorder > 0 { parts.append("reorder \(reorder)") }
            if cutMidFrame > 0 { parts.append("cut \(cutMidFrame)") }
            return parts.isEmpty ? "none" : parts.joined(separator: ", ")
        }
    }

    /// What the proxy has done since it started.
    package struct Statistics: Sendable, Hashable, CustomStringConvertible {
        /// Client connections accepted.
        package var connections = 0
        /// Connections that upgraded to WebSocket (the first response was 101).
        package var webSocketConnections = 0
        /// WebSocket frames passed on (a duplicated frame counts once here).
        package var framesForwarded = 0
        package var framesDropped = 0
        package var framesDuplicated = 0
        package var framesReordered = 0
        /// Chunks of raw bytes (not whole frames) discarded: before an upgrade, or when black-holed.
        package var chunksDropped = 0
        /// Chunks forwarded with added latency.
        package var chunksDelayed = 0
        /// Connections closed by a fault: a frame cut in the middle, `drop: .close`, `cutAll()`,
        /// or `healAll()` closing a connection that had lost data.
        package var cuts = 0
        /// Connections accepted while black-holed (never forwarded).
        package var blackHoledConnections = 0

        /// Every fault that changed what a peer received (delays not counted).
        package var faultsInjected: Int {
            framesDropped + framesDuplicated + framesReordered + chunksDropped + cuts + blackHoledConnections
        }

        package var description: String {
            "\(connections) connections (\(webSocketConnections) WebSocket), \(framesForwarded) frames forwarded; "
                + "faults: \(framesDropped) frames dropped, \(framesDuplicated) duplicated, \(framesReordered) reordered, "
                + "\(chunksDropped) chunks dropped, \(cuts) cuts, \(blackHoledConnections) black-holed connections; "
                + "\(chunksDelayed) chunks delayed"
        }
    }
}
