import AtollLoad
import Testing

@Suite struct OpenLoopScheduleTests {
    let schedule = OpenLoopSchedule(start: 1_000, ratePerSession: 10, sessions: 4)  // a write every 25 ms

    @Test func writesAreDealtToSessionsInTurnAtAnEvenPace() {
        #expect(schedule.interval == 25_000_000)
        #expect(schedule.write(0) == (0, 0, 1_000))
        #expect(schedule.write(5) == (1, 1, 1_000 + 5 * 25_000_000))
        let times = (0..<100).map { schedule.time(of: $0) }
        #expect(zip(times, times.dropFirst()).allSatisfy { $1 - $0 == 25_000_000 })
        // Every session writes at its own rate: 10 of its writes span 900 ms plus its place.
        let sessionTwo = (0..<40).map { schedule.write($0) }.filter { $0.session == 2 }
        #expect(sessionTwo.map(\.ordinal) == Array(0..<10))
    }

    @Test func dueCountsTheWritesWhoseTimeHasCome() {
        #expect(schedule.due(at: 0) == 0)
        #expect(schedule.due(at: 999) == 0)
        #expect(schedule.due(at: 1_000) == 1)
        #expect(schedule.due(at: 1_000 + 25_000_000 - 1) == 1)
        #expect(schedule.due(at: 1_000 + 25_000_000) == 2)
        for q in [0, 1, 7, 1_000, 123_457] {
            #expect(schedule.due(at: schedule.time(of: q)) == q + 1)
            #expect(schedule.due(at: schedule.time(of: q) - 1) == q)
        }
    }

    /// Open loop: the timetable is a function of time alone, so a generator that wakes late sends
    /// every write it missed at once, each keeping its own due time (the latency counts the wait).
    @Test func aLateWakeUpStillOwesEveryWriteWithItsOwnTime() {
        let late = schedule.start + 1_000_000_000
        let owed = (0..<schedule.due(at: late)).map { schedule.time(of: $0) }
        #expect(owed.count == 41)
        #expect(owed.first == schedule.start)
        #expect(owed.allSatisfy { $0 <= late })
    }

    @Test func consecutiveWindowsSplitTheWritesWithoutGapOrOverlap() {
        let start = schedule.start
        let first = schedule.writes(from: 0, to: start + 1_000_000_000)
        let second = schedule.writes(from: start + 1_000_000_000, to: start + 3_000_000_000)
        #expect(first == 0..<40)
        #expect(second == 40..<120)
        #expect(schedule.writes(from: 0, to: start) == 0..<0)
    }

    @Test func connectionsStartAnEvenShareOfAnIntervalApart() {
        let offsets = (0..<4).map { OpenLoopSchedule.offset(connection: $0, of: 4, ratePerSession: 10, sessionsPerConnection: 4) }
        #expect(offsets == [0, 6_250_000, 12_500_000, 18_750_000])
        #expect(OpenLoopSchedule.offset(connection: 0, of: 1, ratePerSession: 10, sessionsPerConnection: 4) == 0)
    }
}
