"""Stand-in for the captcha package: ImageCaptcha draws the characters with PIL."""
