import ArgumentParser

/// `wear2mqtt-bench`: the end-to-end benchmark of docs/performance.md.
@main
struct Wear2MQTTBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wear2mqtt-bench",
        abstract: "Measure wear2mqtt end to end against the raw relay and mosquitto baselines.",
        subcommands: [BenchRunCommand.self, RelayCommand.self, FloorRelayCommand.self],
        defaultSubcommand: BenchRunCommand.self)
}
