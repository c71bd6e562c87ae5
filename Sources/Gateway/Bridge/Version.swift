/// wear2mqtt's version, shown by `--version` and in `bridge/info`.
public enum Wear2MQTTVersion {
    public static let current = "0.1.0"
}
