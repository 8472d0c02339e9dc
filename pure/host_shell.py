"""The shell a run keeps on a host (``shell/run/host_shell.py``): one POSIX ``sh`` on the far end of one ssh
session that runs a whole stream of commands, each as a call over ssh would, without a session and a
login shell per command (about 110 ms each, ``bench/ssh_calls.py``).

The wire, in bytes, both ways; nothing sent is ever parsed as shell text on the host:

* the shell first writes :data:`READY`, a space, its process id on the host and a newline;
* a request is a line ``N C`` (the number of arguments, the length of standard input), then each argument:
  ``=`` and the argument on one line when it holds no newline, else its length in bytes on a line and then
  exactly those bytes; then ``C`` bytes of standard input;
* the shell runs the arguments as one command (``exec "$@"`` in a subshell, the first argument found on
  ``PATH`` as any command's; standard input from the bytes given, standard output and error each to a
  file of a private folder), then answers with three lines, the exit status and the lengths of standard
  output and standard error, followed by exactly those bytes. ``sh -c PROGRAM NAME ARG…`` is run as
  ``sh`` would run it, but in a subshell of this shell (a process less: most of what a run does on a
  host is such a program, ``pure/remote_files.py``), ``PROGRAM`` given the arguments as ``$1``… (``$0`` is the shell's own).

Arguments arrive through ``read -r`` and ``head -c`` (or ``dd``) into variables and out through ``"$@"``;
only the text of a ``sh -c`` program, which panefleet writes, is parsed as shell (as ``sh -c`` parses it):
``$(…)``, quotes and newlines in arguments stay literal (``tests/core/test_host_shell.py``,
``tests/hosts/test_ssh.py``). The folder is removed
when the shell ends, which it does when its input ends (the session closed, panefleet gone).
"""

from __future__ import annotations

from collections.abc import Sequence

from pure.remote_files import NATIVE

READY = b"panefleet-host-shell-ready"

SERVER = (
    "d=$(mktemp -d) || exit 1; trap 'rm -rf -- \"$d\"' EXIT; trap 'exit 1' HUP INT TERM; "
    # ``take N`` copies exactly N bytes of input: ``head -c`` when it reads no further than it copies
    # (tried on a pipe that holds more), else ``dd`` a byte at a time
    "if [ \"$(printf abc | { head -c 1 >/dev/null 2>&1; cat; })\" = bc ]; then take() { head -c \"$1\"; }; "
    "else take() { dd bs=1 count=\"$1\" 2>/dev/null; }; fi; "
    "size() { if [ -s \"$1\" ]; then wc -c <\"$1\"; else echo 0; fi; }; "
    f"printf '%s %s\\n' {READY.decode()} \"$$\"; "
    "while IFS=' ' read -r n c; do "
    "set --; "
    "while [ \"$n\" -gt 0 ]; do "
    "IFS= read -r a || exit 1; "
    "case $a in =*) set -- \"$@\" \"${a#=}\";; "
    "*) a=$(take \"$a\"; printf .); set -- \"$@\" \"${a%.}\";; esac; "
    "n=$((n - 1)); done; "
    "if [ \"$c\" -gt 0 ]; then take \"$c\"; fi >\"$d/i\"; "
    "if [ \"$1\" = sh ] && [ \"$2\" = -c ] && [ \"$#\" -ge 4 ]; then p=$3; shift 4; "
    "(eval \"$p\") <\"$d/i\" >\"$d/o\" 2>\"$d/e\"; else (exec \"$@\") <\"$d/i\" >\"$d/o\" 2>\"$d/e\"; fi; r=$?; "
    "printf '%s\\n' \"$r\"; size \"$d/o\"; size \"$d/e\"; "
    "if [ -s \"$d/o\" ] || [ -s \"$d/e\" ]; then cat -- \"$d/o\" \"$d/e\"; fi; "
    "done"
)


# The same wire served by Perl 5 (in the base system of Debian, Ubuntu and macOS; on a host without it, its
# start falls back to :data:`SERVER`): a write, a read, an append, a ``Stat`` and a listing are done in the
# server itself, without a process (``pure/remote_files.py`` ``NATIVE`` names their programs, given to it as
# arguments), so a scale-up's hundred-odd file steps on a host cost a round trip each, not five to seven
# processes (``bench/remote_team.py``). Anything else runs as under :data:`SERVER`: the arguments as one
# command, standard input, output and error through files of a private folder. The native steps keep the
# programs' answers: the same exit statuses and standard output, errors in words of their own
# (``tests/hosts/test_ssh.py`` compares both servers and the local executor step by step).
PERL_SERVER = r"""
my ($sh_server, @pairs) = @ARGV;
eval { require Fcntl; require IO::Handle; require POSIX; 1 } or exec "sh", "-c", $sh_server;
my %verb = reverse @pairs;
my $root = ($ENV{TMPDIR} || "/tmp") . "/tmp.";
my ($d, $writing);  # the private folder; the temporary file of a write under way
for (1 .. 100) {
    my $try = $root . join("", map { ("A" .. "Z", "a" .. "z", 0 .. 9)[rand 62] } 1 .. 10);
    if (mkdir $try, 0700) { $d = $try; last }
}
defined $d or exit 1;
END { unlink $writing if defined $writing; if (defined $d) { unlink "$d/i", "$d/o", "$d/e"; rmdir $d } }
$SIG{$_} = sub { exit 1 } for qw(HUP INT TERM);
binmode STDIN; binmode STDOUT; $| = 1;
print "panefleet-host-shell-ready $$\n";
sub take {
    my ($n, $buf) = ($_[0], "");
    while (length($buf) < $n) {
        my $got = read(STDIN, $buf, $n - length($buf), length($buf));
        exit 1 unless $got;
    }
    return $buf;
}
sub slurp { open(my $f, "<", $_[0]) or return ""; binmode $f; local $/; my $s = <$f>; defined $s ? $s : "" }
sub folder_of { my ($p) = @_; return "." unless $p =~ m{/}; $p =~ m{\A(.*)/}s; length $1 ? $1 : "/" }
sub make_path {
    my ($p) = @_;
    return "" if -d $p;
    if ($p =~ m{\A(.*)/[^/]+/*\z}s && length $1) { my $e = make_path($1); return $e if length $e }
    return "" if mkdir($p, 0777) || -d $p;
    return "mkdir: cannot create directory '$p': $!\n";
}
sub sync_folder { if (open(my $f, "<", $_[0])) { $f->sync; close $f } }
sub v_read {
    my ($p) = @_;
    return (3, "", "") unless -e $p;
    open(my $f, "<", $p) or return (1, "", "cat: $p: $!\n");
    binmode $f; local $/; my $s = <$f>;
    defined $s or return (1, "", "cat: $p: $!\n");
    return (0, $s, "");
}
sub v_write {
    my ($p, $mode, $in) = @_;
    my $dir = folder_of($p);
    my $e = make_path($dir); return (1, "", $e) if length $e;
    my ($t, $f);
    for my $n (0 .. 99) {
        $t = "$dir/.pf-write.$$.$n";
        if (sysopen($f, $t, Fcntl::O_WRONLY() | Fcntl::O_CREAT() | Fcntl::O_EXCL(), 0600)) { $writing = $t; last }
        undef $f;
    }
    return (1, "", "cannot make a temporary file in $dir\n") unless $f;
    binmode $f;
    my $m = length $mode ? oct($mode) : -f $p ? (stat _)[2] & 07777 : 0644;
    my $ok = (print {$f} $in) && $f->flush && chmod($m, $t) && $f->sync && close($f) && rename($t, $p);
    undef $writing if $ok;
    unless ($ok) { my $why = "$!"; close $f; unlink $t; undef $writing; return (1, "", "write $p: $why\n") }
    sync_folder($dir);
    return (0, "", "");
}
sub v_append {
    my ($p, $in) = @_;
    my $e = make_path(folder_of($p)); return (1, "", $e) if length $e;
    open(my $f, ">>", $p) or return (1, "", "append $p: $!\n");
    binmode $f;
    my $ok = (print {$f} $in) && $f->flush && $f->sync && close($f);
    return $ok ? (0, "", "") : (1, "", "append $p: $!\n");
}
sub v_stat {
    my ($p) = @_;
    my $kind = -l $p ? "symlink" : !-e $p ? "absent" : -d _ ? "dir" : -f _ ? "file" : "other";
    return (0, "$kind\n", "");
}
sub v_list {
    my ($p) = @_;
    return (3, "", "") unless -e $p;
    opendir(my $h, $p) or return (1, "", "cd: $p: $!\n");
    my @names = grep { $_ ne "." && $_ ne ".." } readdir $h;
    closedir $h;
    return (0, join("", map { "$_\0" } @names), "");
}
my %native = (read => \&v_read, write => \&v_write, append => \&v_append, stat => \&v_stat, list => \&v_list);
sub spawn {
    my ($in, @argv) = @_;
    open(my $i, ">", "$d/i") or return (1, "", "$d/i: $!\n");
    binmode $i; print {$i} $in; close $i;
    my $pid = fork;
    return (1, "", "fork: $!\n") unless defined $pid;
    if (!$pid) {
        $SIG{$_} = "DEFAULT" for qw(HUP INT TERM);
        open(STDIN, "<", "$d/i"); open(STDOUT, ">", "$d/o"); open(STDERR, ">", "$d/e");
        { no warnings; exec { $argv[0] } @argv; }
        print STDERR "$argv[0]: $!\n";
        POSIX::_exit($!{ENOENT} ? 127 : 126);
    }
    waitpid($pid, 0);
    my $code = $? & 127 ? 128 + ($? & 127) : $? >> 8;
    return ($code, slurp("$d/o"), slurp("$d/e"));
}
while (defined(my $head = <STDIN>)) {
    $head =~ /\A(\d+) (\d+)\n\z/ or exit 1;
    my ($n, $c, @argv) = ($1, $2);
    for (1 .. $n) {
        my $a = <STDIN>;
        defined $a or exit 1;
        if ($a =~ /\A=(.*)\n\z/s) { push @argv, $1 }
        elsif ($a =~ /\A(\d+)\n\z/) { push @argv, take($1) }
        else { exit 1 }
    }
    my $in = take($c);
    my $v = @argv >= 4 && $argv[0] eq "sh" && $argv[1] eq "-c" ? $verb{$argv[2]} : undef;
    my ($code, $out, $err) = defined $v ? $native{$v}->(@argv[4 .. $#argv], $in) : spawn($in, @argv);
    print join("\n", $code, length $out, length $err, "") . $out . $err;
}
"""


def server_argv(posix_only: bool = False) -> tuple[str, ...]:
    """The command that starts the shell on a host: :data:`PERL_SERVER` where ``perl`` is found there,
    else (and with ``posix_only``) :data:`SERVER` in ``sh``."""
    if posix_only:
        return ("sh", "-c", SERVER)
    pairs = tuple(word for verb, program in NATIVE for word in (verb, program))
    launch = 'p=$1; shift; command -v perl >/dev/null 2>&1 && exec perl -e "$p" -- "$@"; exec sh -c "$1"'
    return ("sh", "-c", launch, "sh", PERL_SERVER, SERVER, *pairs)


def request(argv: Sequence[str], stdin: bytes | None = None) -> bytes:
    """The bytes that ask the shell to run ``argv`` with ``stdin``. ``argv`` is not empty and holds no NUL
    (``pure/hosts.py`` ``remote_command`` refuses both before anything is sent)."""
    data = stdin or b""
    parts = [f"{len(argv)} {len(data)}\n".encode()]
    for word in argv:
        encoded = word.encode("utf-8")
        if b"\n" in encoded:
            parts.append(f"{len(encoded)}\n".encode() + encoded)
        else:
            parts.append(b"=" + encoded + b"\n")
    parts.append(data)
    return b"".join(parts)


def ready_pid(line: bytes) -> int | None:
    """The shell's process id on the host from its first line; None when the line is not that."""
    words = line.split()
    if len(words) != 2 or words[0] != READY or not words[1].isdigit():
        return None
    return int(words[1])


def answer_head(lines: Sequence[bytes]) -> tuple[int, int, int] | None:
    """The exit status and the two lengths from the answer's first three lines; None when they are not
    numbers (``wc`` may pad its count with blanks)."""
    try:
        code, out, err = (int(line.strip()) for line in lines)
    except ValueError:
        return None
    return (code, out, err) if out >= 0 and err >= 0 else None
