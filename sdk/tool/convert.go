package tool

import (
	"bytes"
	"encoding/json"
	"io"

	pb "github.com/sparrow-cli/sparrow/sdk/proto/sparrow/v1"
)

func bytesReader(b []byte) io.Reader {
	if len(b) == 0 {
		return bytes.NewReader([]byte("{}"))
	}
	return bytes.NewReader(b)
}

var riskToProto = map[Risk]pb.RiskLevel{
	RiskReadOnly:    pb.RiskLevel_RISK_LEVEL_READ_ONLY,
	RiskMutating:    pb.RiskLevel_RISK_LEVEL_MUTATING,
	RiskExec:        pb.RiskLevel_RISK_LEVEL_EXEC,
	RiskDestructive: pb.RiskLevel_RISK_LEVEL_DESTRUCTIVE,
	RiskNetwork:     pb.RiskLevel_RISK_LEVEL_NETWORK,
}

func riskFromProto(r pb.RiskLevel) (Risk, bool) {
	for k, v := range riskToProto {
		if v == r {
			return k, true
		}
	}
	return "", false
}

func specToProto(s Spec) *pb.ToolDescriptor {
	return &pb.ToolDescriptor{
		Name: s.Name, Description: s.Description, InputSchemaJson: string(s.InputSchema),
		Risk: riskToProto[s.Risk], PathArguments: s.PathArguments,
	}
}

func specFromProto(d *pb.ToolDescriptor) Spec {
	r, _ := riskFromProto(d.GetRisk())
	return Spec{
		Name: d.GetName(), Description: d.GetDescription(), InputSchema: json.RawMessage(d.GetInputSchemaJson()),
		Risk: r, PathArguments: d.GetPathArguments(),
	}
}
