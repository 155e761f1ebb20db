// The Khronos Vulkan headers, types and constants only: VK_NO_PROTOTYPES keeps every vk*
// declaration out, so nothing here can link against libvulkan; entry points come from
// vkGetInstanceProcAddr at run time (vulkan_library.h).
#pragma once

#ifndef VK_NO_PROTOTYPES
#define VK_NO_PROTOTYPES
#endif
#include <vulkan/vulkan.h>

// The loader-ICD interface (vk_icd.h) is not always installed with the headers; the two entry
// points the manifest check calls are declared here as the loader's documentation gives them.
extern "C" {
using GcVkIcdNegotiateFn = VkResult(VKAPI_PTR*)(uint32_t* pSupportedVersion);
using GcVkIcdGetInstanceProcAddrFn = PFN_vkVoidFunction(VKAPI_PTR*)(VkInstance instance,
                                                                    const char* pName);
}
