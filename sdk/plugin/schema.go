package plugin

// AttributeType is the HCL type of a configuration attribute.
type AttributeType int

// Attribute types a component's configuration may use.
const (
	String AttributeType = iota + 1
	Number
	Bool
	ListOfString
	MapOfString
	// Duration is a string such as "30s" or "5m", checked by the kernel.
	Duration
)

// String returns the HCL spelling of the type.
func (t AttributeType) String() string {
	switch t {
	case String:
		return "string"
	case Number:
		return "number"
	case Bool:
		return "bool"
	case ListOfString:
		return "list(string)"
	case MapOfString:
		return "map(string)"
	case Duration:
		return "duration"
	}
	return "unknown"
}

// Attribute is one configuration attribute a component accepts in its HCL
// block.
type Attribute struct {
	Name        string
	Type        AttributeType
	Required    bool
	Description string
	// Default is used when the block omits the attribute; nil for none. It
	// must be JSON-encodable and match Type.
	Default any
	// Sensitive values are redacted from events and logs and never printed
	// by `sparrow config show`.
	Sensitive bool
}

// Schema is the configuration a component accepts.
type Schema struct {
	Attributes []Attribute
}
