#if canImport(Glibc)
import Glibc
#endif

/// The sanitizer this process was built with, if any, found by its runtime's entry point: the ThreadSanitizer and
/// AddressSanitizer runtimes are linked into the executable and export `__tsan_init` / `__asan_init`. The
/// executables a test starts come from the same build folder, so they carry the same one.
///
/// Only for what a sanitizer distorts by design, such as resident memory (shadow memory, ASan's quarantine of
/// freed blocks); never to skip a test (docs/reliability.md, Sanitizers).
public enum Sanitizer: String, Sendable {
    case thread = "ThreadSanitizer"
    case address = "AddressSanitizer"

    public static let current: Sanitizer? = {
        guard let program = dlopen(nil, RTLD_NOW) else { return nil }
        defer { dlclose(program) }
        if dlsym(program, "__tsan_init") != nil { return .thread }
        if dlsym(program, "__asan_init") != nil { return .address }
        return nil
    }()
}
