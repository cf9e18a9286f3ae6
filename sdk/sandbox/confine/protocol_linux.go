package confine

// message is one datagram on a session's control socket (a unix
// SOCK_SEQPACKET pair). The plugin sends start (with the command's
// descriptors), signal, alive and end; the server answers started,
// alive and ended, and reports exited on its own.
type message struct {
	Op   string   `json:"op"`
	ID   uint64   `json:"id"`
	Argv []string `json:"argv,omitempty"`
	Dir  string   `json:"dir,omitempty"`
	Env  []string `json:"env,omitempty"`
	// Stdin says the descriptors start with the command's stdin; without
	// it the command reads /dev/null.
	Stdin  bool   `json:"stdin,omitempty"`
	Signal int    `json:"sig,omitempty"`
	Pid    int    `json:"pid,omitempty"`
	Code   int    `json:"code,omitempty"`
	Status uint32 `json:"status,omitempty"`
	Alive  bool   `json:"alive,omitempty"`
	// Clean says the scratch directories were emptied (or a command still
	// runs, so there was nothing to do yet).
	Clean bool `json:"clean,omitempty"`
}

// Operations on the control socket.
const (
	opStart   = "start"
	opStarted = "started"
	opExited  = "exited"
	opSignal  = "signal"
	opAlive   = "alive"
	opEnd     = "end"
	opEnded   = "ended"
)

// maxMessage bounds one request; a command whose argv and environment do
// not fit runs in a sandbox of its own.
const maxMessage = 128 << 10
