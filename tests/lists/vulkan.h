/* lists/vulkan.h - tests of the Vulkan layer, on lavapipe. */

GP_TEST_ENTRY(vulkan_layer_exports_only_entry_points, 30)
GP_TEST_ENTRY(vulkan_render_stage_record_header, 30)
GP_TEST_ENTRY(vulkan_layer_alone_changes_nothing, 120)
GP_TEST_ENTRY(vulkan_record_sample, 240)
GP_TEST_ENTRY(vulkan_record_sample_with_validation, 240)
GP_TEST_ENTRY(vulkan_record_vkcube, 300)
GP_TEST_ENTRY(vulkan_memory_config_parses, 30)
GP_TEST_ENTRY(vulkan_memory_events_balance, 240)
GP_TEST_ENTRY(vulkan_pipeline_statistics_per_stage, 240)
GP_TEST_ENTRY(vulkan_derived_utilization, 120)
GP_TEST_ENTRY(vulkan_record_sample_submit2, 240)
