import Dispatch
import Gateway
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
            if slow { try? await Task.sleep(for: .milliseconds(50)) }
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
            do { try await Task.sleep(for: .seconds(600)) } catch { log.append("cancelled") }
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
}
