/* Convert a folder of images (one sub-folder per class) to an HDF5 file of 224x224 JPEG q70.
 *
 *   cc convert_folder.c $(pkg-config --cflags --libs libdata) -o convert_folder
 *   ./convert_folder images/ out.h5
 */
#include <stdio.h>

#include <libdata/convert.h>

static void on_log(void *user, int level, const char *msg)
{
    (void)user;
    if (level <= LD_LOG_WARN)
        fprintf(stderr, "%s\n", msg); /* skipped files are named here, with the reason */
}

static int on_progress(void *user, const ld_progress *p)
{
    (void)user;
    fprintf(stderr, "\r%llu/%llu", (unsigned long long)p->done, (unsigned long long)p->total);
    return 0; /* nonzero would cancel and leave nothing under the output name */
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s IMAGE_FOLDER OUT.h5\n", argv[0]);
        return 2;
    }
    ld_convert *c = ld_convert_create();
    if (!c) return 1;
    ld_convert_set(c, LD_C_RESIZE_W, 224);
    ld_convert_set(c, LD_C_RESIZE_H, 224);
    ld_convert_set(c, LD_C_RESIZE_MODE, LD_RESIZE_CROP);
    ld_convert_set(c, LD_C_QUALITY, 70);
    ld_convert_set_log(c, on_log, NULL);
    ld_convert_set_progress(c, on_progress, NULL);

    int rc = ld_convert_run(c, argv[1], argv[2]);
    if (rc < 0) {
        fprintf(stderr, "\nerror (%s): %s\n", ld_strerror(rc), ld_convert_errmsg(c));
    } else {
        const ld_progress *s = ld_convert_stats(c);
        printf("\nconverted %llu, skipped %llu, %.2f s\n", (unsigned long long)s->converted,
               (unsigned long long)s->skipped, s->elapsed);
    }
    ld_convert_free(c);
    return rc < 0;
}
