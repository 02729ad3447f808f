// Profiles: the built-ins as PRODUCT.md §1 sets them, JSON overrides, and errors naming keys.
#include "engine/profile.h"

#include <gtest/gtest.h>

using namespace mb::engine;

TEST(Profile, BuiltinsMatchTheSpecification) {
    const Profile f = Profile::fast();
    EXPECT_EQ(f.weights, WeightsPolicy::Preload);
    EXPECT_EQ(f.kv, KvPolicy::Pool);
    EXPECT_EQ(f.blockSize, 16);
    EXPECT_TRUE(f.prefixCache);
    EXPECT_EQ(f.batching, BatchingPolicy::Off);
    EXPECT_EQ(f.maxContext, 32768);
    EXPECT_EQ(f.truncation, Truncation::KeepTail);
    EXPECT_EQ(f.precision, Precision::Mixed);
    EXPECT_EQ(f.reload, ReloadPolicy::AfterWarmup);
    const Profile r = Profile::regular();
    EXPECT_EQ(r.weights, WeightsPolicy::OnDemand);
    EXPECT_EQ(r.kv, KvPolicy::PerRequest);
    EXPECT_FALSE(r.prefixCache);
    EXPECT_EQ(r.batching, BatchingPolicy::Dynamic);
    EXPECT_EQ(r.maxContext, 131072);
    EXPECT_EQ(r.truncation, Truncation::Reject);
    EXPECT_EQ(r.precision, Precision::Native);
    EXPECT_EQ(r.reload, ReloadPolicy::Hot);
    EXPECT_EQ(f.validate(), "");
    EXPECT_EQ(r.validate(), "");
}

TEST(Profile, JsonOverridesItsBase) {
    const Profile p = Profile::fromJson(R"({"base": "fast", "max_context": 4096})");
    EXPECT_EQ(p.maxContext, 4096);
    EXPECT_TRUE(p.prefixCache);
    EXPECT_EQ(p.name, "fast-custom");
    const Profile q = Profile::fromJson(R"({"name": "wide", "max_batch": 16, "truncation": "keep_head_tail",
                                           "precision": "int8"})");
    EXPECT_EQ(q.name, "wide");
    EXPECT_EQ(q.maxBatch, 16);
    EXPECT_EQ(q.kv, KvPolicy::PerRequest); // base regular
    EXPECT_EQ(q.truncation, Truncation::KeepHeadTail);
    EXPECT_EQ(q.precision, Precision::Int8);
}

TEST(Profile, RoundTripsThroughJson) {
    Profile p = Profile::fast();
    p.name = std::string("x"); // (assigning the literal trips GCC 12 bug 105329, a false -Wrestrict)
    p.maxWaitMs = 2.5;
    const Profile q = Profile::fromJson(p.toJson());
    EXPECT_EQ(q.toJson(), p.toJson());
}

TEST(Profile, ErrorsNameTheKey) {
    auto message = [](const std::string& json) {
        try {
            Profile::fromJson(json);
        } catch (const ProfileError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_NE(message(R"({"max_contxt": 5})").find("max_contxt"), std::string::npos);
    EXPECT_NE(message(R"({"kv": "heap"})").find("'kv'"), std::string::npos);
    EXPECT_NE(message(R"({"block_size": 0})").find("block_size"), std::string::npos);
    EXPECT_NE(message(R"({"max_batch": "8"})").find("max_batch"), std::string::npos);
    EXPECT_NE(message(R"({"base": "turbo"})").find("base"), std::string::npos);
    EXPECT_NE(message(R"({"kv": "per_request", "prefix_cache": true})").find("prefix_cache"), std::string::npos);
    EXPECT_NE(message(R"({"kv_pool_tokens": 2147483648})").find("kv_pool_tokens"), std::string::npos);
    EXPECT_EQ(message(R"({"kv_pool_tokens": 2147483647})"), "no error");
    EXPECT_NE(message("[1, 2]").find("object"), std::string::npos);
    EXPECT_NE(message("{").find("JSON"), std::string::npos);
    EXPECT_THROW(Profile::load("/no/such/profile.json"), ProfileError);
}
