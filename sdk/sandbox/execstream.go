package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/sparrow-cli/sparrow/sdk/proto/sparrow/v1"
)

// execServerStream is the server side of Sandbox.Exec and Host.Exec: both
// speak the same messages.
type execServerStream = grpc.BidiStreamingServer[pb.ExecInput, pb.ExecOutput]

// execClientStream is the client side of Sandbox.Exec and Host.Exec.
type execClientStream = grpc.BidiStreamingClient[pb.ExecInput, pb.ExecOutput]

// chunkSize bounds one stdin or output message.
const chunkSize = 32 << 10

// serveExec adapts one Exec stream to a Go exec function: the first message
// must be ExecStart; later ones feed stdin and signals; output and the exit
// status flow back.
func serveExec(stream execServerStream, run func(ctx context.Context, start *pb.ExecStart, io IO) (Exit, error)) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	start := first.GetStart()
	if start == nil {
		return status.Error(codes.InvalidArgument, "exec stream must begin with an ExecStart message")
	}
	if len(start.GetArgv()) == 0 {
		return status.Error(codes.InvalidArgument, "exec: argv is empty")
	}
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()

	stdinR, stdinW := io.Pipe()
	signals := make(chan string, 8)
	go pumpExecInput(stream, stdinW, signals)

	var mu sync.Mutex
	send := func(out *pb.ExecOutput) error {
		mu.Lock()
		defer mu.Unlock()
		return stream.Send(out)
	}
	stdout := outputWriter(func(b []byte) error { return send(&pb.ExecOutput{Output: &pb.ExecOutput_Stdout{Stdout: b}}) })
	stderr := outputWriter(func(b []byte) error { return send(&pb.ExecOutput{Output: &pb.ExecOutput_Stderr{Stderr: b}}) })

	exit, err := run(ctx, start, IO{Stdin: stdinR, Stdout: stdout, Stderr: stderr, Signals: signals})
	_ = stdinR.Close()
	if err != nil {
		if _, ok := status.FromError(err); ok {
			return err
		}
		return status.Error(codes.Unknown, err.Error())
	}
	return send(&pb.ExecOutput{Output: &pb.ExecOutput_Exit{Exit: exitToProto(exit)}})
}

// pumpExecInput feeds stdin and signals from the stream until it ends.
// Stdin is written by its own goroutine from a queue, so a signal is
// delivered at once even while the command is not reading its input.
func pumpExecInput(stream execServerStream, stdin *io.PipeWriter, signals chan<- string) {
	defer close(signals)
	q := newChunkQueue()
	go func() {
		for {
			b, ok := q.pop()
			if !ok {
				_ = stdin.Close()
				return
			}
			if _, err := stdin.Write(b); err != nil {
				q.drain() // the command stopped reading; drop the rest
			}
		}
	}()
	defer q.close()
	for {
		in, err := stream.Recv()
		if err != nil {
			return
		}
		switch v := in.GetInput().(type) {
		case *pb.ExecInput_Stdin:
			q.push(v.Stdin)
		case *pb.ExecInput_CloseStdin:
			q.close()
		case *pb.ExecInput_Signal:
			select {
			case signals <- v.Signal:
			default: // nobody is listening; a pending signal is enough
			}
		}
	}
}

// outputWriter sends each write as one or more output messages.
type outputWriter func([]byte) error

func (w outputWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		c := min(len(p), chunkSize)
		if err := w(append([]byte(nil), p[:c]...)); err != nil {
			return n, err
		}
		n += c
		p = p[c:]
	}
	return n, nil
}

// runExec drives the client side of an Exec stream to completion.
func runExec(ctx context.Context, stream execClientStream, start *pb.ExecStart, cio IO) (Exit, error) {
	// gRPC allows one sender at a time: stdin, signals and the final
	// CloseSend all go through mu, and nothing is sent after CloseSend.
	var mu sync.Mutex
	closed := false
	send := func(in *pb.ExecInput) error {
		mu.Lock()
		defer mu.Unlock()
		if closed {
			return io.EOF
		}
		return stream.Send(in)
	}
	closeSend := func() {
		mu.Lock()
		defer mu.Unlock()
		closed = true
		_ = stream.CloseSend()
	}
	// A Send that fails with io.EOF means the server already ended the
	// stream (refused, or finished fast); its outcome is read below.
	if err := send(&pb.ExecInput{Input: &pb.ExecInput_Start{Start: start}}); err != nil && !errors.Is(err, io.EOF) {
		return Exit{}, fmt.Errorf("exec: send start: %w", err)
	}
	if cio.Stdin == nil {
		if err := send(&pb.ExecInput{Input: &pb.ExecInput_CloseStdin{CloseStdin: true}}); err != nil && !errors.Is(err, io.EOF) {
			return Exit{}, fmt.Errorf("exec: close stdin: %w", err)
		}
	} else {
		go pumpStdin(cio.Stdin, send)
	}
	done := make(chan struct{})
	defer close(done)
	if cio.Signals != nil {
		go func() {
			for {
				select {
				case <-done:
					return
				case sig, ok := <-cio.Signals:
					if !ok {
						return
					}
					_ = send(&pb.ExecInput{Input: &pb.ExecInput_Signal{Signal: sig}})
				}
			}
		}()
	}
	stdout, stderr := orDiscard(cio.Stdout), orDiscard(cio.Stderr)
	for {
		out, err := stream.Recv()
		if err != nil {
			if ctx.Err() != nil {
				return Exit{}, ctx.Err()
			}
			if errors.Is(err, io.EOF) {
				return Exit{}, errors.New("exec: stream ended without an exit status")
			}
			return Exit{}, err
		}
		switch v := out.GetOutput().(type) {
		case *pb.ExecOutput_Stdout:
			if _, err := stdout.Write(v.Stdout); err != nil {
				return Exit{}, fmt.Errorf("exec: write stdout: %w", err)
			}
		case *pb.ExecOutput_Stderr:
			if _, err := stderr.Write(v.Stderr); err != nil {
				return Exit{}, fmt.Errorf("exec: write stderr: %w", err)
			}
		case *pb.ExecOutput_Exit:
			closeSend()
			// A command the plugin stopped because the call's context
			// ended (its deadline travels with the call, and the plugin's
			// timer may fire before ours does) is the caller's
			// cancellation, not the command's own exit.
			if err := ctx.Err(); err != nil {
				return Exit{}, err
			}
			if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
				return Exit{}, context.DeadlineExceeded
			}
			return exitFromProto(v.Exit), nil
		}
	}
}

func pumpStdin(r io.Reader, send func(*pb.ExecInput) error) {
	buf := make([]byte, chunkSize)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if send(&pb.ExecInput{Input: &pb.ExecInput_Stdin{Stdin: append([]byte(nil), buf[:n]...)}}) != nil {
				return
			}
		}
		if err != nil {
			_ = send(&pb.ExecInput{Input: &pb.ExecInput_CloseStdin{CloseStdin: true}})
			return
		}
	}
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// chunkQueue is an unbounded FIFO of stdin chunks; close ends it after
// what was queued.
type chunkQueue struct {
	mu     sync.Mutex
	cond   *sync.Cond
	items  [][]byte
	closed bool
}

func newChunkQueue() *chunkQueue {
	q := &chunkQueue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *chunkQueue) push(b []byte) {
	q.mu.Lock()
	if !q.closed {
		q.items = append(q.items, b)
	}
	q.mu.Unlock()
	q.cond.Signal()
}

func (q *chunkQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.cond.Broadcast()
}

func (q *chunkQueue) drain() {
	q.mu.Lock()
	q.items = nil
	q.mu.Unlock()
}

// pop waits for the next chunk; false once closed and empty.
func (q *chunkQueue) pop() ([]byte, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) == 0 && !q.closed {
		q.cond.Wait()
	}
	if len(q.items) == 0 {
		return nil, false
	}
	b := q.items[0]
	q.items = q.items[1:]
	return b, true
}
