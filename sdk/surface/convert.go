package surface

import (
	"errors"

	pb "github.com/sparrow-cli/sparrow/sdk/proto/sparrow/v1"
)

func commandToProto(c Command) (*pb.Command, error) {
	m := &pb.Command{Principal: c.Principal}
	switch {
	case c.StartRun != nil:
		m.Command = &pb.Command_StartRun{StartRun: &pb.StartRun{Task: c.StartRun.Task, Workspace: c.StartRun.Workspace, Model: c.StartRun.Model}}
	case c.Approve != nil:
		m.Command = &pb.Command_Approve{Approve: &pb.Approve{ApprovalId: c.Approve.ApprovalID, Scope: c.Approve.Scope}}
	case c.Deny != nil:
		m.Command = &pb.Command_Deny{Deny: &pb.Deny{ApprovalId: c.Deny.ApprovalID, Reason: c.Deny.Reason}}
	case c.Cancel != nil:
		m.Command = &pb.Command_Cancel{Cancel: &pb.Cancel{RunId: c.Cancel.RunID}}
	case c.SetAutonomy != nil:
		m.Command = &pb.Command_SetAutonomy{SetAutonomy: &pb.SetAutonomy{RunId: c.SetAutonomy.RunID, Level: c.SetAutonomy.Level}}
	default:
		return nil, errors.New("empty command")
	}
	return m, nil
}

func commandFromProto(m *pb.Command) (Command, error) {
	c := Command{Principal: m.GetPrincipal()}
	switch v := m.GetCommand().(type) {
	case *pb.Command_StartRun:
		c.StartRun = &StartRun{Task: v.StartRun.GetTask(), Workspace: v.StartRun.GetWorkspace(), Model: v.StartRun.GetModel()}
	case *pb.Command_Approve:
		c.Approve = &Approve{ApprovalID: v.Approve.GetApprovalId(), Scope: v.Approve.GetScope()}
	case *pb.Command_Deny:
		c.Deny = &Deny{ApprovalID: v.Deny.GetApprovalId(), Reason: v.Deny.GetReason()}
	case *pb.Command_Cancel:
		c.Cancel = &Cancel{RunID: v.Cancel.GetRunId()}
	case *pb.Command_SetAutonomy:
		if l := v.SetAutonomy.GetLevel(); !(l >= 0 && l <= 1) { // NaN too
			return Command{}, errors.New("autonomy level outside 0.0-1.0")
		}
		c.SetAutonomy = &SetAutonomy{RunID: v.SetAutonomy.GetRunId(), Level: v.SetAutonomy.GetLevel()}
	default:
		return Command{}, errors.New("empty command")
	}
	return c, nil
}
