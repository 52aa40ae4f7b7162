/*
 * dataconv's terminal output during a conversion: the progress bar (stderr, TTY only),
 * warnings as they come, the closing summary, and Ctrl-C handling.
 *
 * The library calls both callbacks on the thread that runs ld_convert_run(), so no locking
 * is needed here. A signal only sets a flag; the next progress callback returns it as
 * "cancel", and the library removes its temporary output.
 */
#ifndef DATACONV_PROGRESS_H
#define DATACONV_PROGRESS_H

#include <stdint.h>
#include <stdio.h>

#include <libdata/convert.h>

typedef struct dc_progress {
    FILE *out;         /* stderr */
    int tty;           /* draw the bar */
    int quiet;         /* errors only */
    int verbose;       /* also LD_LOG_INFO lines */
    int width;         /* terminal columns */
    double last_draw;  /* monotonic seconds of the last redraw */
    int drawn;         /* a bar is on screen (clear it before printing a line) */
    uint64_t warnings; /* warning lines printed */
} dc_progress;

/** Set up for output to stderr. */
void dc_progress_init(dc_progress *p, int quiet, int verbose);

/** ld_log_fn: warnings as "dataconv: ...", INFO with --verbose; errors are printed by main. */
void dc_progress_log(void *user, int level, const char *msg);

/** ld_progress_fn: redraws the bar at most ~10 times a second; returns the cancel flag. */
int dc_progress_update(void *user, const ld_progress *p);

/** Remove the bar from the screen (before the summary or an error message). */
void dc_progress_clear(dc_progress *p);

/** Print the closing summary of a successful run. `output` is the path given by the user. */
void dc_progress_summary(dc_progress *p, const ld_progress *s, const char *output,
                         const char *format_name);

/** Install SIGINT/SIGTERM handlers that only set the cancel flag. A second signal of the
 *  same kind kills the process the default way (for a library stuck in a system call). */
void dc_signals_install(void);

/** @return 0, or the signal number that asked us to stop. */
int dc_signal_caught(void);

/** Format a byte count as "1.2 MiB" into buf. */
const char *dc_human_bytes(uint64_t n, char *buf, size_t size);

#endif /* DATACONV_PROGRESS_H */
