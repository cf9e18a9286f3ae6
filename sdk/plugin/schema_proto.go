package plugin

import (
	"encoding/json"
	"fmt"

	pb "github.com/sparrow-cli/sparrow/sdk/proto/sparrow/v1"
)

var attributeTypeToProto = map[AttributeType]pb.AttributeType{
	String:       pb.AttributeType_ATTRIBUTE_TYPE_STRING,
	Number:       pb.AttributeType_ATTRIBUTE_TYPE_NUMBER,
	Bool:         pb.AttributeType_ATTRIBUTE_TYPE_BOOL,
	ListOfString: pb.AttributeType_ATTRIBUTE_TYPE_LIST_OF_STRING,
	MapOfString:  pb.AttributeType_ATTRIBUTE_TYPE_MAP_OF_STRING,
	Duration:     pb.AttributeType_ATTRIBUTE_TYPE_DURATION,
}

// SchemaToProto converts a Schema for the wire.
func SchemaToProto(s Schema) (*pb.ConfigSchema, error) {
	out := &pb.ConfigSchema{}
	for _, a := range s.Attributes {
		t, ok := attributeTypeToProto[a.Type]
		if !ok {
			return nil, fmt.Errorf("attribute %q: unknown type %d", a.Name, a.Type)
		}
		var def string
		if a.Default != nil {
			b, err := json.Marshal(a.Default)
			if err != nil {
				return nil, fmt.Errorf("attribute %q: encode default: %w", a.Name, err)
			}
			def = string(b)
		}
		out.Attributes = append(out.Attributes, &pb.ConfigAttribute{
			Name: a.Name, Type: t, Required: a.Required, Description: a.Description,
			DefaultJson: def, Sensitive: a.Sensitive,
		})
	}
	return out, nil
}

// SchemaFromProto converts a wire schema, rejecting what a well-behaved
// plugin never sends: nameless or duplicate attributes, unknown types and
// defaults that are not JSON.
func SchemaFromProto(p *pb.ConfigSchema) (Schema, error) {
	var s Schema
	seen := map[string]bool{}
	for i, a := range p.GetAttributes() {
		if a.GetName() == "" {
			return Schema{}, fmt.Errorf("attribute %d has no name", i)
		}
		if seen[a.GetName()] {
			return Schema{}, fmt.Errorf("attribute %q declared twice", a.GetName())
		}
		seen[a.GetName()] = true
		var t AttributeType
		for k, v := range attributeTypeToProto {
			if v == a.GetType() {
				t = k
			}
		}
		if t == 0 {
			return Schema{}, fmt.Errorf("attribute %q: unknown type %v", a.GetName(), a.GetType())
		}
		var def any
		if a.GetDefaultJson() != "" {
			if err := json.Unmarshal([]byte(a.GetDefaultJson()), &def); err != nil {
				return Schema{}, fmt.Errorf("attribute %q: default is not JSON: %w", a.GetName(), err)
			}
		}
		s.Attributes = append(s.Attributes, Attribute{
			Name: a.GetName(), Type: t, Required: a.GetRequired(), Description: a.GetDescription(),
			Default: def, Sensitive: a.GetSensitive(),
		})
	}
	return s, nil
}
