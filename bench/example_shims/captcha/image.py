"""ImageCaptcha(fonts=[ttf, ...]).generate(text): a PNG (BytesIO) of ``text`` in one of the
fonts at a random size, offset and tilt, with noise dots and a line (example/ctc)."""
import io
import random

from PIL import Image, ImageDraw, ImageFont


class ImageCaptcha(object):
    """Captcha images of ``width`` x ``height`` pixels."""

    def __init__(self, width=160, height=60, fonts=None, font_sizes=None):
        self._width, self._height = width, height
        self._fonts = list(fonts or [])
        self._sizes = tuple(font_sizes or (42, 50, 56))

    def _font(self):
        if not self._fonts:
            return ImageFont.load_default()
        return ImageFont.truetype(random.choice(self._fonts), random.choice(self._sizes))

    def generate_image(self, chars):
        """The captcha as a PIL image."""
        image = Image.new('RGB', (self._width, self._height), (255, 255, 255))
        draw = ImageDraw.Draw(image)
        x = random.randint(2, 12)
        for char in chars:
            glyph = Image.new('L', (60, 70), 0)
            ImageDraw.Draw(glyph).text((5, 0), char, font=self._font(), fill=255)
            glyph = glyph.rotate(random.uniform(-25, 25), expand=False)
            image.paste((random.randint(10, 120),) * 3, (x, random.randint(-8, 4)), glyph)
            x += random.randint(24, 34)
        for _ in range(30):
            draw.point((random.randint(0, self._width - 1), random.randint(0, self._height - 1)),
                       fill=(0, 0, 0))
        draw.line([(0, random.randint(0, self._height)), (self._width,
                                                          random.randint(0, self._height))],
                  fill=(60, 60, 60), width=2)
        return image

    def generate(self, chars, format='png'):  # pylint: disable=redefined-builtin
        """The captcha encoded (PNG) in a BytesIO."""
        out = io.BytesIO()
        self.generate_image(chars).save(out, format=format)
        out.seek(0)
        return out
