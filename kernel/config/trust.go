package config

// modeRank orders permission modes from most to least restrictive. An
// unknown mode ranks as the most permissive, so it never counts as a
// narrowing.
func modeRank(mode string) int {
	switch mode {
	case ModeEmergencyStop:
		return 0
	case ModeReadOnly, ModePlan:
		return 1
	case ModeSupervised:
		return 2
	case ModeTrusted:
		return 3
	case ModeAutonomous:
		return 4
	default:
		return 5
	}
}

// sandboxIsolation ranks how well a sandbox isolates the host, following a
// sandbox block's plugin when one is configured. It reports false for a
// sandbox whose isolation is unknown.
func (c *Config) sandboxIsolation(name string) (int, bool) {
	if sb, ok := c.Sandboxes[name]; ok && sb.Plugin != "" {
		name = sb.Plugin
	}
	switch name {
	case "local":
		return 0, true
	case "worktree":
		return 1, true
	case "local-hardened":
		return 2, true
	case "docker", "ssh", "modal":
		return 3, true
	default:
		return 0, false
	}
}
