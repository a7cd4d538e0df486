import RoostServer
try await demo()
