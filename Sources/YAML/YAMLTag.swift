/// A YAML tag by its full name (`tag:yaml.org,2002:int`), with the YAML 1.1 resolution of untagged plain text.
public struct YAMLTag: Sendable, Hashable, CustomStringConvertible {
    public var name: String

    public init(_ name: String) {
        self.name = name
    }

    public var description: String { name }

    /// No tag written: resolved from the text.
    public static let implicit = YAMLTag("")
    /// The tag `!`: a string whatever the text.
    public static let nonSpecific = YAMLTag("!")
    public static let str = YAMLTag("tag:yaml.org,2002:str")
    public static let seq = YAMLTag("tag:yaml.org,2002:seq")
    public static let map = YAMLTag("tag:yaml.org,2002:map")
    public static let bool = YAMLTag("tag:yaml.org,2002:bool")
    public static let int = YAMLTag("tag:yaml.org,2002:int")
    public static let float = YAMLTag("tag:yaml.org,2002:float")
    public static let null = YAMLTag("tag:yaml.org,2002:null")
    public static let merge = YAMLTag("tag:yaml.org,2002:merge")
    public static let timestamp = YAMLTag("tag:yaml.org,2002:timestamp")
    public static let value = YAMLTag("tag:yaml.org,2002:value")

    /// The tag YAML 1.1 gives untagged text: the rules and their order are those of Yams' default resolver (which the
    /// configuration was read with before), so `yes` is a boolean, `0o17` and `1:30` are integers, `~` is null.
    public static func resolve(_ text: String) -> YAMLTag {
        for (tag, matches) in rules where matches(text) { return tag }
        return .str
    }

    private static let rules: [(YAMLTag, @Sendable (String) -> Bool)] = [
        (.bool, { $0.wholeMatch(of: #/yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF/#) != nil }),
        (.int, {
            $0.wholeMatch(
                of: #/[-+]?0b[0-1_]+|[-+]?0o?[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+/#
            ) != nil
        }),
        (.float, {
            $0.wholeMatch(
                of: #/[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)/#
            ) != nil
        }),
        (.merge, { $0 == "<<" }),
        (.null, { $0 == "~" || $0 == "null" || $0 == "Null" || $0 == "NULL" || $0.isEmpty }),
        (.timestamp, {
            $0.wholeMatch(
                of: #/[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?/#
            ) != nil
        }),
        (.value, { $0 == "=" }),
    ]
}
