import Dispatch
@testable import EventLoop
import Synchronization
import Testing

/// `OrderedWorkQueue`: one item at a time, in the order enqueued, whoever enqueues and however long an item takes.
@Suite("An ordered work queue")
struct OrderedWorkQueueTests {
    /// What the items did, in the order they did it.
    final class Log<Entry: Sendable>: Sendable {
        let entries = Mutex<[Entry]>([])
        func append(_ entry: Entry) { entries.withLock { $0.append(entry) } }
        var all: [Entry] { entries.withLock { $0 } }
    }

    struct Refused: Error, Equatable {}

    /// Runs `body` on `threads` threads of their own at once, off the test's task.
    static func onThreads(_ threads: Int, _ body: @escaping @Sendable (Int) -> Void) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                DispatchQueue.concurrentPerform(iterations: threads, execute: body)
                done.resume()
            }
        }
    }

    /// Work that takes a while without waiting for time: it gives every other task its chance to run a hundred times
    /// (to overtake it or run beside it, were the queue wrong).
    static func busy() async {
        for _ in 0..<100 { await Task.yield() }
    }

    @Test func itemsRunInTheOrderTheyWereEnqueued() async {
        let queue = OrderedWorkQueue()
        let log = Log<Int>()
        for index in 0..<1000 { #expect(queue.enqueue { log.append(index) }) }
        await queue.drained()
        #expect(log.all == Array(0..<1000))
    }

    @Test func enqueuesFromManyThreadsAtOnceRunInTheOrderTheyWereMade() async {
        let queue = OrderedWorkQueue()
        let log = Log<Int>()
        // The order the enqueues were made in, fixed by a lock the producers take around each.
        let made = Mutex(0)
        await Self.onThreads(8) { _ in
            for _ in 0..<250 {
                made.withLock { count in
                    let index = count
                    count += 1
                    queue.enqueue { log.append(index) }
                }
            }
        }
        await queue.drained()
        #expect(log.all == Array(0..<2000))
    }

    @Test func eachThreadsItemsRunInItsOrderWhileTheThreadsRace() async {
        let queue = OrderedWorkQueue()
        let log = Log<(thread: Int, index: Int)>()
        await Self.onThreads(8) { thread in
            for index in 0..<500 { queue.enqueue { log.append((thread, index)) } }
        }
        await queue.drained()
        let all = log.all
        #expect(all.count == 4000)
        for thread in 0..<8 { #expect(all.filter { $0.thread == thread }.map(\.index) == Array(0..<500), "thread \(thread)") }
    }

    @Test func aSlowItemIsNotOvertakenAndItemsNeverOverlap() async {
        let queue = OrderedWorkQueue()
        let log = Log<String>()
        let running = Mutex((now: 0, most: 0))
        @Sendable func item(_ name: String, slow: Bool) async {
            running.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
            if slow { await Self.busy() }
            log.append(name)
            running.withLock { $0.now -= 1 }
        }
        queue.enqueue { await item("slow", slow: true) }
        for index in 0..<20 { queue.enqueue { await item("\(index)", slow: index % 7 == 3) } }
        await queue.drained()
        #expect(log.all == ["slow"] + (0..<20).map(String.init))
        #expect(running.withLock(\.most) == 1)
    }

    @Test func anItemThatThrowsIsReportedAndTheRestRunInOrder() async {
        let failures = Log<Refused>()
        let queue = OrderedWorkQueue(failed: { error in if let refused = error as? Refused { failures.append(refused) } })
        let log = Log<Int>()
        for index in 0..<10 {
            queue.enqueue {
                if index == 4 { throw Refused() }
                log.append(index)
            }
        }
        await queue.drained()
        #expect(log.all == [0, 1, 2, 3, 5, 6, 7, 8, 9])
        #expect(failures.all == [Refused()])
    }

    @Test func drainedWaitsForWhatCameBeforeAndReturnsAtOnceWhenIdle() async {
        let queue = OrderedWorkQueue()
        await queue.drained()
        let log = Log<Int>()
        let (opened, open) = AsyncStream.makeStream(of: Void.self)
        queue.enqueue { for await _ in opened { break } }
        queue.enqueue { log.append(1) }
        open.yield()
        // The first item may not have read the opening yet: drained waits for it, and for the one behind it.
        await queue.drained()
        #expect(log.all == [1])
    }

    @Test func finishRunsWhatIsQueuedThenRefusesMore() async {
        let queue = OrderedWorkQueue()
        let log = Log<Int>()
        for index in 0..<5 {
            queue.enqueue {
                await Task.yield()
                log.append(index)
            }
        }
        await queue.finish()
        #expect(log.all == Array(0..<5))
        #expect(!queue.enqueue { log.append(99) })
        await queue.drained()
        #expect(log.all == Array(0..<5))
    }

    @Test func cancelStopsTheRunningItemAndDropsTheQueuedOnes() async {
        let queue = OrderedWorkQueue()
        let log = Log<String>()
        let (started, start) = AsyncStream.makeStream(of: Void.self)
        queue.enqueue {
            start.yield()
            // Runs until cancelled: an AsyncStream's iteration ends when its task is cancelled.
            let (forever, open) = AsyncStream.makeStream(of: Void.self)
            for await _ in forever {}
            if Task.isCancelled { log.append("cancelled") }
            open.finish()
        }
        for index in 0..<5 { queue.enqueue { log.append("\(index)") } }
        for await _ in started { break }
        queue.cancel()
        await queue.drained()
        #expect(log.all == ["cancelled"])
        #expect(!queue.enqueue { log.append("late") })
        await queue.drained()
        #expect(log.all == ["cancelled"])
    }

    @Test func runWaitsItsTurnAndAnswersItsResult() async {
        let queue = OrderedWorkQueue()
        let log = Log<String>()
        let (opened, open) = AsyncStream.makeStream(of: Void.self)
        queue.enqueue {
            for await _ in opened { break }
            log.append("before")
        }
        async let answer = queue.run { () async -> Int in
            log.append("run")
            return 42
        }
        // Enqueued once the run has taken its place (and while it waits): it runs after it.
        while queue.placedCount < 2 { await Task.yield() }
        queue.enqueue { log.append("after") }
        open.yield()
        #expect(await answer == 42)
        await queue.drained()
        #expect(log.all == ["before", "run", "after"])
    }

    @Test func runsFromManyTasksEachGetTheirOwnResultInOrder() async {
        let queue = OrderedWorkQueue()
        let log = Log<Int>()
        let results = await withTaskGroup(of: (Int, Int).self) { group in
            for index in 0..<50 {
                group.addTask { (index, await queue.run { () async -> Int in log.append(index); return index * 2 }) }
            }
            return await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        #expect(results == Dictionary(uniqueKeysWithValues: (0..<50).map { ($0, $0 * 2) }))
        let ran = log.all
        #expect(ran.sorted() == Array(0..<50) && Set(ran).count == 50, "each exactly once")
    }

    @Test func theCallersCancellationDoesNotReachRunWork() async {
        let queue = OrderedWorkQueue()
        let (started, start) = AsyncStream.makeStream(of: Void.self)
        // The work goes on once the caller was cancelled.
        let (proceed, go) = AsyncStream.makeStream(of: Void.self)
        let caller = Task {
            await queue.run { () async -> Bool in
                start.yield()
                for await _ in proceed { break }
                return Task.isCancelled
            }
        }
        for await _ in started { break }
        caller.cancel()
        go.yield()
        #expect(await caller.value == false, "the work ran to its end, uncancelled")
    }

    @Test func runOnAFinishedQueueRunsAtOnce() async {
        let queue = OrderedWorkQueue()
        await queue.finish()
        #expect(await queue.run { () async -> String in "still" } == "still")
    }

    /// What `inTurn` is for: an actor's own work, on its own task, taking its place in the line.
    actor Device {
        let queue = OrderedWorkQueue()
        var running = 0
        var mostAtOnce = 0
        var order: [Int] = []
        var arrived = 0

        func command(_ index: Int, slow: Bool) async -> Bool {
            // No suspension between here and `inTurn` taking its place: `arrived` counts places taken.
            arrived += 1
            return await queue.inTurn {
                running += 1
                mostAtOnce = max(mostAtOnce, running)
                // The actor is free while a command sleeps: others arrive and must wait their turn.
                if slow { await OrderedWorkQueueTests.busy() }
                order.append(index)
                running -= 1
                return Task.isCancelled
            }
        }
    }

    @Test func inTurnBodiesRunOneAtATimeInArrivalOrderOnTheCallersActor() async {
        let device = Device()
        // Arrival order is fixed: each command is started once the one before it has taken its place.
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<10 {
                group.addTask { _ = await device.command(index, slow: index % 3 == 0) }
                while await device.arrived <= index { await Task.yield() }
            }
        }
        #expect(await device.order == Array(0..<10))
        #expect(await device.mostAtOnce == 1)
    }

    @Test func inTurnWaitsForEnqueuedItemsAndHoldsThoseBehind() async {
        let queue = OrderedWorkQueue()
        let log = Log<String>()
        queue.enqueue {
            await Self.busy()
            log.append("item before")
        }
        await queue.inTurn {
            queue.enqueue { log.append("item after") }
            await Self.busy()
            log.append("body")
        }
        await queue.drained()
        #expect(log.all == ["item before", "body", "item after"])
    }

    @Test func theCallersCancellationReachesAnInTurnBody() async {
        let device = Device()
        let caller = Task { await device.command(0, slow: true) }
        caller.cancel()
        #expect(await caller.value == true)
    }
}

