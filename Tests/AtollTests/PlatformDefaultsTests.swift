@testable import Atoll
import Foundation
import Testing

/// The platform-neutral logic behind Apple-only paths: the unified log's types for the default
/// logger (`os.Logger` on Apple platforms) and the Foundation-only index paths Atoll builds its
/// sectioned changes from (UIKit/AppKit give `item`/`section` there).
@Suite struct PlatformDefaultsTests {
    @Test func theDefaultLoggerMapsLevelsToTheUnifiedLogsTypes() {
        let types = LogLevel.allCases.map { ($0, Logger.unifiedLogType(for: $0)) }
        let expected: [LogLevel: Logger.UnifiedLogType] = [
            .off: .debug, .fatal: .fault, .error: .error, .warn: .default, .info: .info,
            .detail: .debug, .debug: .debug, .trace: .debug, .all: .debug,
        ]
        for (level, type) in types { #expect(type == expected[level], "\(level.name)") }
        #expect(Logger.unifiedLogSubsystem == "io.atoll")
    }

    @Test func theDefaultLoggerOfANewProcessPassesInfoAndBelow() {
        let logger = Logger.platformDefault()
        #expect(logger.level == .info)
    }

    @Test func atollsIndexPathsAreUIKitsItemInSection() {
        let path = IndexPath(3, inSection: 1)
        #expect(path == IndexPath(item: 3, section: 1))
        #expect(path.sectionIndex == path.section && path.itemIndex == path.item)
        #expect(path.sectionIndex == 1 && path.itemIndex == 3)
    }
}

/// The platform-neutral part of `SyncSession`'s key-value observing on Apple platforms: an
/// `NSObject` whose `@objc` state enums have realm-swift's raw values, and the transition rule the
/// `willChangeValue`/`didChangeValue` pair is computed from.
@Suite struct SyncSessionKeyValueShapeTests {
    @Test func aSessionIsAnNSObjectWithRealmSwiftsStateValues() {
        #expect((SyncSession.self as AnyObject.Type) is NSObject.Type)
        #expect([SyncSession.State.active, .inactive, .invalid].map(\.rawValue) == [0, 1, 2])
        #expect([SyncSession.ConnectionState.disconnected, .connecting, .connected].map(\.rawValue) == [0, 1, 2])
    }

    @Test func anUpdateChangesWhatKeyValueObserversAreToldOf() {
        let active = SyncSession.Snapshot(state: .active, connectionState: .connected)
        #expect(SyncSession.updated(active, state: .inactive, connection: nil) == .init(state: .inactive, connectionState: .connected))
        #expect(SyncSession.updated(active, state: nil, connection: .connecting) == .init(state: .active, connectionState: .connecting))
        // An invalid session stays invalid and may only disconnect.
        let invalid = SyncSession.Snapshot(state: .invalid, connectionState: .connected)
        #expect(SyncSession.updated(invalid, state: .active, connection: .connecting) == invalid)
        #expect(SyncSession.updated(invalid, state: nil, connection: .disconnected) == .init(state: .invalid, connectionState: .disconnected))
    }
}
