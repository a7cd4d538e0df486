#if DEBUG
    #if canImport(Glibc)
        import Glibc
    #endif
    import Synchronization

    /// Debug builds only: counts JSON parses made where the design forbids them. The SQLite
    /// writer runs its closures inside ``forbidding(_:)``, so a test can prove that writes build
    /// their documents before they queue, and no client-sized parse runs in the single writer.
    public enum JSONParseAudit {
        private static let count = Atomic<Int>(0)
        // A thread-specific flag: parses on other threads, running at the same time, do not count.
        private static let key: pthread_key_t = {
            var key = pthread_key_t()
            pthread_key_create(&key, nil)
            return key
        }()

        /// Parses made so far, in this process, inside ``forbidding(_:)``.
        public static var forbiddenParses: Int { count.load(ordering: .sequentiallyConsistent) }

        /// Runs `body`, counting every parse it makes on this thread.
        public static func forbidding<T>(_ body: () throws -> T) rethrows -> T {
            let previous = pthread_getspecific(key)
            pthread_setspecific(key, UnsafeRawPointer(bitPattern: 1))
            defer { pthread_setspecific(key, previous) }
            return try body()
        }

        static func noteParse() {
            if pthread_getspecific(key) != nil { count.add(1, ordering: .sequentiallyConsistent) }
        }
    }
#endif
