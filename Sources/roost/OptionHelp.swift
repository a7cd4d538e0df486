extension ServeOption {
    /// The help lines of `options` in the commands' two-column layout, each with its variable: a
    /// label as wide as the column gets its own line, so no value name is cut short.
    static func helpLines(_ options: [ServeOption]) -> [String] {
        options.flatMap { option -> [String] in
            let label = "\(option.flag) \(option.valueName)"
            let column = String(repeating: " ", count: 30)
            let variable = "  \(column)env: \(option.variable)"
            guard label.count >= 30 else {
                return [
                    "  \(label.padding(toLength: 30, withPad: " ", startingAt: 0))\(option.help)", variable,
                ]
            }
            return ["  \(label)", "  \(column)\(option.help)", variable]
        }
    }
}
