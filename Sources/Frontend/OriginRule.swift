/// Whether a browser page may open the WebSocket: a page of this gateway (its `Origin` is the scheme and `Host` it
/// was served with), one of `frontend.allowed_origins`, or no browser at all (no `Origin`: scripts, test clients —
/// they still need the token). Refusing other origins stops a web page elsewhere from driving the wearables through
/// a browser that can reach the gateway (cross-site WebSocket hijacking).
struct OriginRule: Sendable {
    let allowed: Set<String>

    init(allowedOrigins: [String]) {
        allowed = Set(allowedOrigins.map { $0.lowercased() })
    }

    func allows(origin: String?, host: String?, secure: Bool) -> Bool {
        guard let origin else { return true }
        let page = origin.lowercased()
        if allowed.contains(page) { return true }
        guard let host, !host.isEmpty else { return false }
        return page == (secure ? "https://" : "http://") + host.lowercased()
    }
}
