import DBus

/// BlueZ's D-Bus names (bluez `doc/org.bluez.*.rst`), in one place.
public enum BlueZNames {
    public static let service = "org.bluez"
    public static let adapter = "org.bluez.Adapter1"
    public static let device = "org.bluez.Device1"
    public static let gattService = "org.bluez.GattService1"
    public static let gattCharacteristic = "org.bluez.GattCharacteristic1"
    public static let gattDescriptor = "org.bluez.GattDescriptor1"
    public static let agentManager = "org.bluez.AgentManager1"
    public static let agent = "org.bluez.Agent1"
    public static let objectManager = "org.freedesktop.DBus.ObjectManager"
    public static let properties = "org.freedesktop.DBus.Properties"
    public static let root: ObjectPath = "/"
    public static let bluezPath: ObjectPath = "/org/bluez"
}

/// BlueZ's error names (`org.bluez.Error.*`) that callers act on.
public enum BlueZErrorName {
    public static let inProgress = "org.bluez.Error.InProgress"
    public static let failed = "org.bluez.Error.Failed"
    public static let notReady = "org.bluez.Error.NotReady"
    public static let notConnected = "org.bluez.Error.NotConnected"
    public static let alreadyConnected = "org.bluez.Error.AlreadyConnected"
    public static let notPermitted = "org.bluez.Error.NotPermitted"
    public static let notSupported = "org.bluez.Error.NotSupported"
    public static let notAuthorized = "org.bluez.Error.NotAuthorized"
    public static let doesNotExist = "org.bluez.Error.DoesNotExist"
    public static let authenticationFailed = "org.bluez.Error.AuthenticationFailed"
    public static let authenticationCanceled = "org.bluez.Error.AuthenticationCanceled"
    public static let authenticationRejected = "org.bluez.Error.AuthenticationRejected"
    public static let authenticationTimeout = "org.bluez.Error.AuthenticationTimeout"
    public static let connectionAttemptFailed = "org.bluez.Error.ConnectionAttemptFailed"
    public static let alreadyExists = "org.bluez.Error.AlreadyExists"
    public static let rejected = "org.bluez.Error.Rejected"
    public static let canceled = "org.bluez.Error.Canceled"
}
