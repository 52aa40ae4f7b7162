/*
 * Progress bar, warnings, summary and signal flag for dataconv (see progress.h).
 */
#include "progress.h"

#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

/* The only process-wide state of the tool: written by the signal handler, read by the
 * progress callback. sig_atomic_t is the one type a handler may portably write. */
static volatile sig_atomic_t caught_signal;

static void on_signal(int sig)
{
    caught_signal = sig;
}

void dc_signals_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    /* One-shot: if the run does not stop (e.g. stuck on a dead network file system), a
     * second Ctrl-C kills the process the default way. */
    sa.sa_flags = SA_RESETHAND;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    /* Past `ulimit -f`, let write() fail with EFBIG so the library reports it and removes its
     * temporary, instead of the kernel killing us with a half-written temporary left. */
    signal(SIGXFSZ, SIG_IGN);
}

int dc_signal_caught(void)
{
    return (int)caught_signal;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

const char *dc_human_bytes(uint64_t n, char *buf, size_t size)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = (double)n;
    int u = 0;
    while (v >= 1024 && u < 5) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, size, "%" PRIu64 " B", n);
    else
        snprintf(buf, size, "%.*f %s", v < 10 ? 2 : v < 100 ? 1 : 0, v, units[u]);
    return buf;
}

static void fmt_duration(double s, char *buf, size_t size)
{
    if (s < 0 || s > 359999) s = 359999;
    unsigned t = (unsigned)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, size, "%u:%02u:%02u", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, size, "%u:%02u", t / 60, t % 60);
}

void dc_progress_init(dc_progress *p, int quiet, int verbose)
{
    memset(p, 0, sizeof *p);
    p->out = stderr;
    p->quiet = quiet;
    p->verbose = verbose && !quiet;
    const char *term = getenv("TERM");
    p->tty = !quiet && isatty(STDERR_FILENO) && !(term && strcmp(term, "dumb") == 0);
    p->width = 80;
    struct winsize ws;
    if (p->tty && ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40)
        p->width = ws.ws_col;
}

void dc_progress_clear(dc_progress *p)
{
    if (p->drawn) {
        fputs("\r\033[K", p->out);
        p->drawn = 0;
        fflush(p->out);
    }
}

void dc_progress_log(void *user, int level, const char *msg)
{
    dc_progress *p = user;
    if (p->quiet || level == LD_LOG_ERROR || level == LD_LOG_DEBUG)
        return; /* errors: main prints the run's errmsg once */
    if (level == LD_LOG_INFO && !p->verbose) return;
    dc_progress_clear(p);
    if (level == LD_LOG_WARN) {
        p->warnings++;
        /* the library names the file and the reason; "skipped ..." reads well as is */
        if (strncmp(msg, "skipped", 7) == 0)
            fprintf(p->out, "dataconv: %s\n", msg);
        else
            fprintf(p->out, "dataconv: warning: %s\n", msg);
    } else {
        fprintf(p->out, "dataconv: %s\n", msg);
    }
    fflush(p->out);
}

static void draw(dc_progress *p, const ld_progress *s)
{
    char line[512], tail[160], eta[32];
    if (s->total == 0) {
        snprintf(line, sizeof line, "dataconv: scanning input...");
    } else {
        double rate = s->elapsed > 0 ? (double)s->done / s->elapsed : 0;
        if (rate > 0 || s->done >= s->total)
            fmt_duration(s->done >= s->total ? 0 : (double)(s->total - s->done) / rate, eta,
                         sizeof eta);
        else
            snprintf(eta, sizeof eta, "--:--");
        unsigned pct = (unsigned)(s->done * 100 / s->total);
        char tot[24];
        int digits = snprintf(tot, sizeof tot, "%" PRIu64, s->total);
        /* fixed widths so the bar does not jump as the numbers grow */
        snprintf(tail, sizeof tail, " %*" PRIu64 "/%s %3u%% %6.0f img/s ETA %s", digits, s->done,
                 tot, pct, rate, eta);
        int bar = p->width - 1 - (int)strlen(tail) - 2;
        if (bar > 50) bar = 50;
        if (bar < 10) {
            snprintf(line, sizeof line, "%s", tail + 1);
        } else {
            int fill = (int)((uint64_t)bar * s->done / s->total);
            char b[64];
            for (int i = 0; i < bar; i++)
                b[i] = i < fill ? '#' : '.';
            b[bar] = '\0';
            snprintf(line, sizeof line, "[%s]%s", b, tail);
        }
    }
    fprintf(p->out, "\r%s\033[K", line);
    fflush(p->out);
    p->drawn = 1;
}

int dc_progress_update(void *user, const ld_progress *s)
{
    dc_progress *p = user;
    if (p->tty) {
        double t = now_seconds();
        /* the library calls about 10 times a second; also redraw at the final call */
        if (t - p->last_draw >= 0.1 || (s->total && s->done == s->total)) {
            draw(p, s);
            p->last_draw = t;
        }
    }
    return caught_signal != 0;
}

/* With --split, the library writes "<stem>.txt" listing the files: show them. */
static void print_split_list(dc_progress *p, const char *output)
{
    size_t n = strlen(output);
    const char *dot = strrchr(output, '.');
    const char *slash = strrchr(output, '/');
    if (dot && (!slash || dot > slash)) n = (size_t)(dot - output);
    char *list = malloc(n + 5);
    if (!list) return;
    memcpy(list, output, n);
    memcpy(list + n, ".txt", 5);
    FILE *f = fopen(list, "r");
    if (f) {
        fprintf(p->out, "  files     %s lists:\n", list);
        char line[4096];
        int shown = 0;
        while (fgets(line, sizeof line, f)) {
            line[strcspn(line, "\r\n")] = '\0';
            if (shown++ < 8) fprintf(p->out, "            %s\n", line);
        }
        if (shown > 8) fprintf(p->out, "            ... (%d files)\n", shown);
        fclose(f);
    }
    free(list);
}

void dc_progress_summary(dc_progress *p, const ld_progress *s, const char *output,
                         const char *format_name)
{
    dc_progress_clear(p);
    if (p->quiet) return;
    FILE *o = p->out;
    char in[32], outb[32], t[32];
    fprintf(o, "dataconv: converted %" PRIu64 " of %" PRIu64 " images to %s (%s)\n", s->converted,
            s->total, output, format_name);
    if (s->skipped) {
        fprintf(o, "  skipped   %" PRIu64 ":", s->skipped);
        const char *sep = " ";
        if (s->skipped_format)
            fprintf(o, "%s%" PRIu64 " corrupt or not an image", sep, s->skipped_format), sep = ", ";
        if (s->skipped_io) fprintf(o, "%s%" PRIu64 " unreadable", sep, s->skipped_io), sep = ", ";
        if (s->skipped_limit)
            fprintf(o, "%s%" PRIu64 " over a limit", sep, s->skipped_limit), sep = ", ";
        uint64_t other = s->skipped - s->skipped_format - s->skipped_io - s->skipped_limit;
        if (s->skipped >= s->skipped_format + s->skipped_io + s->skipped_limit && other)
            fprintf(o, "%s%" PRIu64 " other", sep, other);
        fputs(" (named above; --strict makes them fatal)\n", o);
    }
    if (s->reduced_16bit)
        fprintf(o,
                "  16-bit    %" PRIu64 " image%s had 16-bit samples, stored as 8 bits (--depth 16 "
                "keeps them)\n",
                s->reduced_16bit, s->reduced_16bit == 1 ? "" : "s");
    if (s->boxes || s->boxes_dropped)
        fprintf(o, "  boxes     %" PRIu64 " written, %" PRIu64 " cropped away (dropped)\n",
                s->boxes, s->boxes_dropped);
    if (s->unlisted) {
        /* folder mode: what was never listed as an image, by reason */
        fprintf(o, "  not listed %" PRIu64 ":", s->unlisted);
        const char *sep = " ";
        if (s->unlisted_name)
            fprintf(o, "%s%" PRIu64 " not named like an image", sep, s->unlisted_name), sep = ", ";
        if (s->unlisted_hidden)
            fprintf(o, "%s%" PRIu64 " hidden", sep, s->unlisted_hidden), sep = ", ";
        if (s->unlisted_special)
            fprintf(o, "%s%" PRIu64 " not a regular file", sep, s->unlisted_special), sep = ", ";
        if (s->unlisted_loose)
            fprintf(o, "%s%" PRIu64 " in no class folder", sep, s->unlisted_loose), sep = ", ";
        if (s->unlisted_unsafe)
            fprintf(o, "%s%" PRIu64 " named outside the archive ('..', absolute)", sep,
                    s->unlisted_unsafe),
                sep = ", ";
        fputs(p->verbose ? " (named above)\n" : " (-v names them)\n", o);
    }
    if (s->first_frame_only)
        fprintf(o,
                "  frames    %" PRIu64 " multi-page or animated file%s: the first page or "
                "frame of each converted\n",
                s->first_frame_only, s->first_frame_only == 1 ? "" : "s");
    double ratio = s->bytes_in ? (double)s->bytes_out / (double)s->bytes_in : 0;
    fprintf(o, "  bytes     in %s, out %s (%.2fx of input)\n",
            dc_human_bytes(s->bytes_in, in, sizeof in),
            dc_human_bytes(s->bytes_out, outb, sizeof outb), ratio);
    fmt_duration(s->elapsed, t, sizeof t);
    double rate = s->elapsed > 0 ? (double)s->converted / s->elapsed : 0;
    if (s->elapsed < 60)
        fprintf(o, "  time      %.2f s, %.0f images/s\n", s->elapsed, rate);
    else
        fprintf(o, "  time      %s, %.0f images/s\n", t, rate);
    if (s->files_out > 1) print_split_list(p, output);
    fflush(o);
}
