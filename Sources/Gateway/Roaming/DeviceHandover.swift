import Wearables

/// One gateway's side of handing devices over (docs/roaming.md, "Handover"), as a state machine: assignments,
/// handoffs and timeouts in; what to do with each device out. Connecting, stopping sessions and publishing are the
/// caller's; it tells this machine when a release is done (`released`).
///
/// A device here is *held* (this gateway connects it and runs its commands), *awaited* (assigned to this gateway,
/// waiting for the previous owner's handoff), *releasing* (assigned away, its session stopping) or absent.
public struct DeviceHandover: Sendable {
    public enum Action: Sendable, Equatable {
        /// Connect the device and run its commands; `storage`: the driver entries the previous owner handed over
        /// (nil: none came, keep what this gateway has).
        case hold(device: String, storage: [String: [String: DeviceValue]]?)
        /// Stop the device's streams and sync, commit its cursors, disconnect, then call `released`.
        case release(device: String, epoch: UInt64)
        /// Publish `handoff/<device>` retained.
        case publishHandoff(device: String, SiteMessages.Handoff)
        /// Call `timedOut(device:epoch:)` after the release timeout unless the handoff came.
        case startReleaseTimer(device: String, epoch: UInt64)
    }

    enum State: Sendable, Equatable {
        case held(epoch: UInt64)
        case awaited(epoch: UInt64, from: String)
        case releasing(epoch: UInt64)
    }

    public let gatewayID: String
    private(set) var states: [String: State] = [:]
    /// Handoffs read for devices not awaited yet (the retained handoff can arrive before the assignment it answers).
    private var handoffs: [String: SiteMessages.Handoff] = [:]

    public init(gatewayID: String) { self.gatewayID = gatewayID }

    public func holds(_ device: String) -> Bool {
        if case .held? = states[device] { return true }
        return false
    }

    /// The assignment now in force for `device` (`SiteOwnership.record` said so), with the previous owner and
    /// whether that gateway is still in the site.
    public mutating func assigned(_ assignment: SiteAssignment, device: String, previousOwner: String?,
                                  previousOwnerPresent: Bool) -> [Action] {
        if assignment.gateway == gatewayID {
            switch states[device] {
            case .held?, .awaited?:
                // Already ours (a newer epoch of the same decision, or the echo of our own assignment).
                if case .awaited(_, let from)? = states[device] { states[device] = .awaited(epoch: assignment.epoch, from: from) }
                else { states[device] = .held(epoch: assignment.epoch) }
                return []
            case .releasing?, nil:
                guard let previousOwner, previousOwner != gatewayID, previousOwnerPresent else {
                    states[device] = .held(epoch: assignment.epoch)
                    return [.hold(device: device, storage: takeHandoff(device, epoch: assignment.epoch))]
                }
                if let handoff = handoffs[device], handoff.epoch == assignment.epoch {
                    handoffs[device] = nil
                    states[device] = .held(epoch: assignment.epoch)
                    return [.hold(device: device, storage: handoff.storage)]
                }
                states[device] = .awaited(epoch: assignment.epoch, from: previousOwner)
                return [.startReleaseTimer(device: device, epoch: assignment.epoch)]
            }
        }
        switch states[device] {
        case .held?:
            states[device] = .releasing(epoch: assignment.epoch)
            return [.release(device: device, epoch: assignment.epoch)]
        case .releasing?:
            states[device] = .releasing(epoch: assignment.epoch)
            return []
        case .awaited?:
            // Moved on again before the handoff came: nothing was connected here.
            states[device] = nil
            return []
        case nil:
            return []
        }
    }

    /// The caller finished letting `device` go (a release this machine asked for), with its driver entries.
    public mutating func released(device: String, storage: [String: [String: DeviceValue]],
                                  releasedMilliseconds: Int64) -> [Action] {
        guard case .releasing(let epoch)? = states[device] else { return [] }
        states[device] = nil
        let handoff = SiteMessages.Handoff(epoch: epoch, from: gatewayID, releasedMilliseconds: releasedMilliseconds,
                                           storage: storage)
        return [.publishHandoff(device: device, handoff)]
    }

    /// A `handoff/<device>` read from the broker.
    public mutating func handoffArrived(_ handoff: SiteMessages.Handoff, device: String) -> [Action] {
        guard case .awaited(let epoch, _)? = states[device] else {
            if handoff.from != gatewayID { handoffs[device] = handoff }
            return []
        }
        guard handoff.epoch == epoch else { return [] }
        states[device] = .held(epoch: epoch)
        return [.hold(device: device, storage: handoff.storage)]
    }

    /// The release timer ran out, or the previous owner left the site: connect without its handoff.
    public mutating func timedOut(device: String, epoch: UInt64) -> [Action] {
        guard case .awaited(let awaitedEpoch, _)? = states[device], awaitedEpoch == epoch else { return [] }
        states[device] = .held(epoch: epoch)
        return [.hold(device: device, storage: nil)]
    }

    public mutating func gatewayLeft(_ gateway: String) -> [Action] {
        var actions: [Action] = []
        for (device, state) in states.sorted(by: { $0.key < $1.key }) {
            guard case .awaited(let epoch, let from) = state, from == gateway else { continue }
            actions += timedOut(device: device, epoch: epoch)
        }
        return actions
    }

    /// The device left the registry.
    public mutating func removed(device: String) -> [Action] {
        defer { states[device] = nil; handoffs[device] = nil }
        if case .held(let epoch)? = states[device] { return [.release(device: device, epoch: epoch)] }
        return []
    }

    private mutating func takeHandoff(_ device: String, epoch: UInt64) -> [String: [String: DeviceValue]]? {
        defer { handoffs[device] = nil }
        guard let handoff = handoffs[device], handoff.epoch == epoch else { return nil }
        return handoff.storage
    }
}
