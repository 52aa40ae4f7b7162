#!/usr/bin/python3
"""Build the input-format corpus (issue 29 item 1) with ImageMagick from the fixture photos.

Usage: make_formats.py PHOTOS_DIR OUTDIR      (PHOTOS_DIR: LD_TEST_DATA/photos)

OUTDIR/tree/<format>/<file>: every input format dataconv reads, in gray, colour, alpha and
palette variants, a multi-page TIFF, an animated GIF and WebP, 16-bit TIFF/PNM, tiled and
JPEG-compressed TIFF, RLE BMP, ASCII PNM, and JPEGs named .jpe/.jfif. Every image is
IMG_W x IMG_H, so that a raw HDF5 conversion without resizing keeps each one's pixels as
decoded (the test compares them with Pillow's or OpenCV's decode of the same file).

OUTDIR/MANIFEST lines (tab-separated): relative path, reference decoder ("pil" or "cv2"),
frames/pages, a note. "pil": Image.open(f) (frame 0).convert("RGB"); "cv2": cv2.imread(f,
IMREAD_COLOR) (for 16-bit PNM, which Pillow opens as a 32-bit integer mode, and for the TIFF
orientation tag, which OpenCV applies).

ImageMagick (the `convert` command, Debian package imagemagick) writes the files; nothing here
decodes them. Deterministic for a given ImageMagick version.
"""
import os
import shutil
import subprocess
import sys

IMG_W, IMG_H = 96, 72

# (relative path, convert options after the input, reference, frames, note). "{in}" is the
# source photo, "{in2}", "{in3}" two more (for multi-page and animated files).
ALPHA = ["(", "+clone", "-fx", "(i+j)/(w+h)", ")", "-alpha", "off", "-compose",
         "CopyOpacity", "-composite"]
FILES = [
    ("bmp/rgb24.bmp", [], "pil", 1, "24-bit BGR, v5 header"),
    ("bmp/bmp3_rgb24.bmp", ["-define", "bmp:format=bmp3"], "pil", 1, "24-bit, 40-byte header"),
    ("bmp/palette8.bmp", ["-colors", "200", "-type", "Palette"], "pil", 1, "8-bit palette"),
    ("bmp/palette4.bmp", ["-colors", "14", "-depth", "4", "-type", "Palette"], "pil", 1,
     "4-bit palette"),
    ("bmp/gray8.bmp", ["-colorspace", "Gray", "-type", "Grayscale"], "pil", 1,
     "8-bit gray palette"),
    ("bmp/bilevel1.bmp", ["-colorspace", "Gray", "-threshold", "50%", "-type", "Bilevel"], "pil",
     1, "1-bit"),
    ("bmp/alpha32.bmp", ALPHA, "pil", 1, "32-bit with alpha (bit fields)"),
    ("bmp/rgb565.bmp", ["-define", "bmp:subtype=RGB565"], "pil", 1, "16-bit 5-6-5 bit fields"),
    ("bmp/rle8.bmp", ["-colors", "60", "-type", "Palette", "-compress", "RLE", "-define",
                      "bmp:format=bmp3"], "pil", 1, "8-bit RLE"),
    ("tiff/rgb_lzw.tif", ["-compress", "LZW"], "pil", 1, "RGB, LZW"),
    ("tiff/rgb_none.tiff", ["-compress", "None"], "pil", 1, "RGB, uncompressed"),
    ("tiff/gray_zip.tif", ["-colorspace", "Gray", "-compress", "Zip"], "pil", 1, "8-bit gray"),
    ("tiff/rgba.tif", ALPHA + ["-compress", "LZW"], "pil", 1, "RGBA, unassociated alpha"),
    ("tiff/palette.tif", ["-colors", "100", "-type", "Palette"], "pil", 1, "8-bit palette"),
    ("tiff/rgb16.tif", ["-depth", "16", "-compress", "Zip"], "pil", 1, "16-bit RGB"),
    ("tiff/big_endian.tif", ["-define", "tiff:endian=msb", "-compress", "None"], "pil", 1, "MM byte order"),
    ("tiff/tiled.tif", ["-define", "tiff:tile-geometry=32x32", "-compress", "LZW"], "pil", 1,
     "tiled 32x32 (libtiff's RGBA path)"),
    ("tiff/jpeg.tif", ["-compress", "JPEG", "-quality", "90"], "pil", 1,
     "JPEG-compressed YCbCr (RGBA path)"),
    ("tiff/pages3.tif", "multi", "pil", 3, "three pages: the first is converted"),
    ("tiff/orient6.tif", ["ROTATED", "-orient", "RightTop", "-compress", "LZW"], "cv2", 1,
     "orientation tag 6, stored 72x96: shown (and converted) 96x72 (OpenCV applies the tag; "
     "Pillow 9.4's exif_transpose leaves a TIFF as stored)"),
    ("webp/lossy.webp", ["-quality", "80"], "pil", 1, "lossy VP8"),
    ("webp/lossless.webp", ["-define", "webp:lossless=true"], "pil", 1, "lossless VP8L"),
    ("webp/alpha_lossless.webp", ALPHA + ["-define", "webp:lossless=true"], "pil", 1,
     "lossless with alpha"),
    ("webp/alpha_lossy.webp", ALPHA + ["-quality", "85"], "pil", 1, "lossy with alpha (ALPH)"),
    ("webp/anim.webp", "anim", "pil", 3, "animated, three frames: the first is converted"),
    ("gif/palette.gif", [], "pil", 1, "256 colours"),
    ("gif/gray.gif", ["-colorspace", "Gray"], "pil", 1, "gray palette"),
    ("gif/interlaced.gif", ["-interlace", "GIF"], "pil", 1, "interlaced"),
    ("gif/transparent.gif", ALPHA, "pil", 1, "with a transparent index"),
    ("gif/anim.gif", "anim", "pil", 3, "animated, three frames: the first is converted"),
    ("pnm/gray.pgm", [], "pil", 1, "P5 8-bit"),
    ("pnm/rgb.ppm", [], "pil", 1, "P6 8-bit"),
    ("pnm/ascii_gray.pgm", ["-compress", "None"], "pil", 1, "P2 ASCII"),
    ("pnm/ascii_rgb.ppm", ["-compress", "None"], "pil", 1, "P3 ASCII"),
    ("pnm/bitmap.pbm", ["-threshold", "50%"], "pil", 1, "P4 bitmap"),
    ("pnm/rgb16.ppm", ["-depth", "16"], "cv2", 1, "P6 16-bit"),
    ("pnm/gray16.pgm", ["-depth", "16"], "cv2", 1, "P5 16-bit"),
    ("jpeg/photo.jpe", ["-quality", "90"], "pil", 1, "JPEG named .jpe"),
    ("jpeg/photo.jfif", ["-quality", "90"], "pil", 1, "JPEG named .jfif"),
    ("jpeg/photo.JPE", ["-colorspace", "Gray", "-quality", "90"], "pil", 1,
     "gray JPEG named .JPE"),
]


def convert(args):
    subprocess.run(["convert"] + args, check=True)


def make(photos_dir, out):
    photos = sorted(os.path.join(photos_dir, f) for f in os.listdir(photos_dir)
                    if f.endswith(".jpg"))
    if len(photos) < 3:
        sys.exit("need at least 3 photos in %s" % photos_dir)
    if not shutil.which("convert"):
        sys.exit("ImageMagick's convert is missing: apt-get install imagemagick "
                 "(scripts/deps.sh test)")
    tree = os.path.join(out, "tree")
    size = ["-resize", "%dx%d!" % (IMG_W, IMG_H)]
    lines = []
    for k, (rel, opts, ref, frames, note) in enumerate(FILES):
        dst = os.path.join(tree, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        src = [photos[(k + i) % len(photos)] for i in range(3)]
        fmt = {".jpe": "JPEG:", ".jfif": "JPEG:", ".JPE": "JPEG:"}.get(os.path.splitext(rel)[1],
                                                                      "")
        if opts == "multi":
            convert([a for s in src for a in (s,)] + size + ["-compress", "LZW", dst])
        elif opts == "anim":
            extra = ["-define", "webp:lossless=true"] if rel.endswith(".webp") else []
            convert(["-delay", "20"] + src + size + ["-loop", "0"] + extra + [dst])
        elif opts[:1] == ["ROTATED"]:  # stored H x W, the orientation tag turns it
            convert([src[0]] + ["-resize", "%dx%d!" % (IMG_H, IMG_W)] + opts[1:] + [dst])
        else:
            convert([src[0]] + size + opts + [fmt + dst])
        lines.append("%s\t%s\t%d\t%s" % (rel, ref, frames, note))
    with open(os.path.join(out, "MANIFEST"), "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    photos, out = sys.argv[1], sys.argv[2]
    if os.path.exists(out):
        sys.exit("%s exists; remove it first" % out)
    make(photos, out)
    print("format corpus in %s: %d files" % (out, len(FILES)))


if __name__ == "__main__":
    main()
