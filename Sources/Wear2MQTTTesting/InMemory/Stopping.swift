/// What a test starts and must stop before it ends — an in-memory gateway, a site of them — so that its simulated
/// devices and tick tasks do not run on into the next tests and load the shared thread pool.
public protocol Stoppable {
    nonisolated(nonsending) func stop() async
}

/// Runs `body` with `value`, then awaits `value.stop()`, whether `body` returned or threw (its error is rethrown once
/// the value is stopped): the awaited form of `defer { Task { await value.stop() } }`.
///
///     try await withStopping(started()) { gateway in
///         #expect(await eventually { gateway.last("strap")?["battery"] != nil })
///     }
public nonisolated(nonsending) func withStopping<Value: Stoppable, Result>(
    _ value: Value, _ body: nonisolated(nonsending) (Value) async throws -> Result
) async rethrows -> Result {
    try await withStopping(value, { await $0.stop() }, body)
}

/// Runs `body` with `value`, then awaits `stop(value)`, whether `body` returned or threw (its error is rethrown once
/// `stop` returned): for a teardown that is more than `stop()`, such as stopping a walker first or removing a folder.
public nonisolated(nonsending) func withStopping<Value, Result>(
    _ value: Value, _ stop: nonisolated(nonsending) (Value) async -> Void,
    _ body: nonisolated(nonsending) (Value) async throws -> Result
) async rethrows -> Result {
    let result: Result
    do {
        result = try await body(value)
    } catch {
        await stop(value)
        throw error
    }
    await stop(value)
    return result
}
