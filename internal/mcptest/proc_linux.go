package mcptest

import (
	"os"
	"strconv"
	"strings"
)

// Alive reports whether process pid exists and has not exited: a zombie (exited, not yet
// reaped by its parent, which for an orphan is init) counts as gone.
func Alive(pid int) bool {
	state, _, ok := stat(pid)
	return ok && state != "Z" && state != "X"
}

// Descendants lists the live processes descended from pid: its children, theirs, and so on.
func Descendants(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if state, ppid, ok := stat(p); ok && state != "Z" && state != "X" {
			children[ppid] = append(children[ppid], p)
		}
	}
	var out []int
	for queue := children[pid]; len(queue) > 0; queue = queue[1:] {
		out = append(out, queue[0])
		queue = append(queue, children[queue[0]]...)
	}
	return out
}

// stat reads a process's state letter and parent from /proc/PID/stat.
func stat(pid int) (state string, ppid int, ok bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0, false
	}
	// pid (comm) state ppid ...; comm may hold spaces and parentheses, so split after the last ')'.
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 2 {
		return "", 0, false
	}
	ppid, err = strconv.Atoi(fields[1])
	return fields[0], ppid, err == nil
}
