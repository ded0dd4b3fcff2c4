import Foundation

extension Realm {
    /// An open started by `Realm.asyncOpen`: cancel it, or follow the download that precedes it.
    public final class AsyncOpenTask: @unchecked Sendable {
        private let lock = NSLock()
        private var task: _Concurrency.Task<Void, Never>?
        private var isCancelled = false
        private var session: SyncSession?
        private var observers: [(DispatchQueue, @Sendable (SyncSession.Progress) -> Void)] = []
        private var tokens: [SyncSession.ProgressNotificationToken] = []

        init() {}

        /// Stops the open: the download is abandoned and the callback is never called. The realm
        /// file keeps what was downloaded so far.
        public func cancel() {
            let (task, tokens) = lock.withLock {
                isCancelled = true
                defer { self.tokens = [] }
                return (self.task, self.tokens)
            }
            task?.cancel()
            for token in tokens { token.invalidate() }
        }

        /// Calls `block` on `queue` with the progress of the download the open waits for (nothing
        /// for a local realm).
        public func addProgressNotification(queue: DispatchQueue = .main, block: @escaping @Sendable (SyncSession.Progress) -> Void) {
            let session: SyncSession? = lock.withLock {
                if self.session == nil { observers.append((queue, block)) }
                return self.session
            }
            if let session { observe(session, queue, block) }
        }

        /// Tests only: returns once the open's work ended (opened, failed or cancelled); what it
        /// handed its callback queue is queued by then.
        @_spi(Testing)
        public func waitUntilFinished() async {
            await lock.withLock { task }?.value
        }

        func run(_ body: @escaping @Sendable () async -> Void) {
            lock.withLock { task = _Concurrency.Task { await body() } }
        }

        /// The session whose download the open waits for.
        func attach(_ session: SyncSession) {
            let waiting = lock.withLock {
                self.session = session
                defer { observers = [] }
                return observers
            }
            for (queue, block) in waiting { observe(session, queue, block) }
        }

        private func observe(_ session: SyncSession, _ queue: DispatchQueue, _ block: @escaping @Sendable (SyncSession.Progress) -> Void) {
            let token = session.addProgressNotification(for: .download, mode: .forCurrentlyOutstandingWork) { progress in
                queue.async { block(progress) }
            }
            guard let token else { return }
            let cancelled = lock.withLock {
                if !isCancelled { tokens.append(token) }
                return isCancelled
            }
            if cancelled { token.invalidate() }
        }

        /// Runs the callback on `queue` unless the open was cancelled.
        func deliver(on queue: DispatchQueue, _ callback: @escaping @Sendable () -> Void) {
            guard !lock.withLock({ isCancelled }) else { return }
            queue.async { [self] in
                guard !lock.withLock({ isCancelled }) else { return }
                lock.withLock { tokens = [] }
                callback()
            }
        }
    }
}

/// Internal code may say `AsyncOpenTask`; apps say `Realm.AsyncOpenTask`, as in realm-swift.
typealias AsyncOpenTask = Realm.AsyncOpenTask
