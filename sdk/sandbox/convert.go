package sandbox

import (
	"time"

	pb "github.com/sparrow-cli/sparrow/sdk/proto/sparrow/v1"
)

func capsToProto(c Capabilities) *pb.SandboxCapabilities {
	return &pb.SandboxCapabilities{
		Available: c.Available, UnavailableReason: c.UnavailableReason,
		NetworkControl: c.NetworkControl, FilesystemIsolation: c.FilesystemIsolation,
		ResourceLimits: c.ResourceLimits, PersistentWorkspace: c.PersistentWorkspace,
		Remote: c.Remote, Protections: c.Protections,
	}
}

func capsFromProto(c *pb.SandboxCapabilities) Capabilities {
	return Capabilities{
		Available: c.GetAvailable(), UnavailableReason: c.GetUnavailableReason(),
		NetworkControl: c.GetNetworkControl(), FilesystemIsolation: c.GetFilesystemIsolation(),
		ResourceLimits: c.GetResourceLimits(), PersistentWorkspace: c.GetPersistentWorkspace(),
		Remote: c.GetRemote(), Protections: c.GetProtections(),
	}
}

func policyToProto(p Policy) *pb.SandboxPolicy {
	return &pb.SandboxPolicy{
		ReadWritePaths: p.ReadWritePaths, ReadOnlyPaths: p.ReadOnlyPaths,
		DeniedPaths: p.DeniedPaths, AllowNetwork: p.AllowNetwork, EnvAllowlist: p.EnvAllowlist,
		DenyReadPaths: p.DenyRead, DenyWritePaths: p.DenyWrite,
	}
}

func policyFromProto(p *pb.SandboxPolicy) Policy {
	return Policy{
		ReadWritePaths: p.GetReadWritePaths(), ReadOnlyPaths: p.GetReadOnlyPaths(),
		DeniedPaths: p.GetDeniedPaths(), AllowNetwork: p.GetAllowNetwork(), EnvAllowlist: p.GetEnvAllowlist(),
		DenyRead: p.GetDenyReadPaths(), DenyWrite: p.GetDenyWritePaths(),
	}
}

func execToProto(component string, r ExecRequest) *pb.ExecStart {
	return &pb.ExecStart{
		Component: component, SessionId: r.SessionID, Argv: r.Argv, Workdir: r.Workdir,
		Env: r.Env, AllowNetwork: r.AllowNetwork,
		Limits: &pb.ResourceLimits{
			TimeoutMs: r.Limits.Timeout.Milliseconds(), MemoryBytes: r.Limits.MemoryBytes,
			MaxPids: r.Limits.MaxPids, DiskBytes: r.Limits.DiskBytes,
			CpuMs: r.Limits.CPUTime.Milliseconds(), MaxOutputBytes: r.Limits.MaxOutputBytes,
		},
	}
}

func execFromProto(s *pb.ExecStart) ExecRequest {
	l := s.GetLimits()
	return ExecRequest{
		SessionID: s.GetSessionId(), Argv: s.GetArgv(), Workdir: s.GetWorkdir(),
		Env: s.GetEnv(), AllowNetwork: s.GetAllowNetwork(),
		Limits: Limits{
			Timeout: time.Duration(l.GetTimeoutMs()) * time.Millisecond, MemoryBytes: l.GetMemoryBytes(),
			MaxPids: l.GetMaxPids(), DiskBytes: l.GetDiskBytes(),
			CPUTime: time.Duration(l.GetCpuMs()) * time.Millisecond, MaxOutputBytes: l.GetMaxOutputBytes(),
		},
	}
}

func exitToProto(e Exit) *pb.ExecExit {
	return &pb.ExecExit{
		Code: int32(e.Code), Signal: e.Signal, TimedOut: e.TimedOut,
		OutputTruncated: e.OutputTruncated, DurationMs: e.Duration.Milliseconds(),
	}
}

func exitFromProto(e *pb.ExecExit) Exit {
	return Exit{
		Code: int(e.GetCode()), Signal: e.GetSignal(), TimedOut: e.GetTimedOut(),
		OutputTruncated: e.GetOutputTruncated(), Duration: time.Duration(e.GetDurationMs()) * time.Millisecond,
	}
}
