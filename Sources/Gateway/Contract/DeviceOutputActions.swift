extension DeviceOutputMapper {
    /// What one report becomes, in order: a collection like `[Action]`, but up to two actions are held inline.
    ///
    /// A sample becomes one publication (two the first time a sensor is seen), and the mapper runs for every
    /// sample; an array there was an allocation per sample (issue 21). Longer lists (a disconnect's flush) spill
    /// into an array.
    public struct Actions: RandomAccessCollection, Sendable, Equatable, ExpressibleByArrayLiteral {
        private var first: Action?
        private var second: Action?
        private var spilled: [Action] = []
        /// Kept, not derived from `first` and `second`: asking an optional enum with payloads whether it is nil
        /// copies the payload, and the loop over a sample's actions asks for `endIndex` at every step.
        public private(set) var count = 0

        public init() {}

        public init(arrayLiteral actions: Action...) { self.init(actions) }

        public init(_ actions: some Sequence<Action>) {
            for action in actions { append(action) }
        }

        /// Consuming: the action moves into its slot, not copied there (a retain of its message's parts, and a release).
        public mutating func append(_ action: consuming Action) {
            switch count {
            case 0: first = action
            case 1: second = action
            default: spilled.append(action)
            }
            count += 1
        }

        /// Hands each action to `body` in order and leaves the collection empty: the first two are moved out, where
        /// reading them through the subscript copied each message (a retain of everything it holds, and a release).
        public mutating func drain(_ body: (Action) -> Void) {
            if let action = first.take() { body(action) }
            if let action = second.take() { body(action) }
            for action in spilled { body(action) }
            spilled = []
            count = 0
        }

        public static func += (actions: inout Actions, more: some Sequence<Action>) {
            for action in more { actions.append(action) }
        }

        public var startIndex: Int { 0 }
        public var endIndex: Int { count }

        public subscript(position: Int) -> Action {
            switch position {
            case 0: first!
            case 1: second!
            default: spilled[position - 2]
            }
        }
    }
}
