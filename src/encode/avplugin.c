/* avplugin.c - the libav plugin's one exported symbol (avplugin.h): its calls as a table.
 * Built into tidepool-av.so only. */
#include "encode/avplugin.h"

#include <libavutil/hash.h>

extern const tp_encoder tp_encoder_mp4;

__attribute__((visibility("default"))) const tp_av_plugin tp_av_plugin_v1 = {
	.abi = TP_AV_PLUGIN_ABI,
	.version = TP_VERSION,
	.config_size = sizeof(enc_config),
	.image_size = sizeof(tp_image),
	.mp4 = &tp_encoder_mp4,
	.log_install = enc_av_log_install,
	.mp4_open = enc_mp4_open,
	.mp4_close = enc_mp4_close,
	.mp4_width = enc_mp4_width,
	.mp4_height = enc_mp4_height,
	.mp4_frames = enc_mp4_frames,
	.mp4_next = enc_mp4_next,
	.join = enc_join,
	.seal = enc_mp4_seal,
	.verify = enc_mp4_verify,
	.hash_names = av_hash_names,
	.hash_alloc = av_hash_alloc,
	.hash_get_size = av_hash_get_size,
	.hash_init = av_hash_init,
	.hash_update = av_hash_update,
	.hash_final_hex = av_hash_final_hex,
	.hash_freep = av_hash_freep,
	.mp4_meta = enc_mp4_meta,
};

/* hash.c, linked into the plugin too, reaches av_hash through the table: here it is this
 * one (in the program, avload.c's tp_av loads the plugin). */
const tp_av_plugin *tp_av(tp_err *err)
{
	(void)err;
	return &tp_av_plugin_v1;
}
