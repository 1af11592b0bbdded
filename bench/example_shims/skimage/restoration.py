"""denoise_tv_chambolle: returns the image unchanged (the examples here run with
--remove-noise 0, which never calls it)."""


def denoise_tv_chambolle(image, **kwargs):
    return image
