// Group-relative advantages, trajectories -> datums, the KL penalty and the RL metrics, checked
// against values worked out by hand from the cookbook's formulas.
#include <tinker/error.hpp>
#include <tinker/train/rl.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace tinker::train {
namespace {

std::vector<float> floats_of(const Datum& datum, const char* name) {
  return datum.loss_fn_inputs.at(name).to_dense_floats();
}

std::vector<std::int64_t> ints_of(const Datum& datum, const char* name) {
  return datum.loss_fn_inputs.at(name).to_dense_ints();
}

Transition transition(std::vector<TokenId> observation, std::vector<TokenId> action, std::vector<float> logprobs,
                      double reward = 0.0) {
  Transition made;
  made.observation.input = ModelInput::from_ints(std::move(observation));
  made.action.tokens = std::move(action);
  made.action.logprobs = std::move(logprobs);
  made.reward = reward;
  return made;
}

Trajectory single_turn(double reward) {
  Trajectory trajectory;
  trajectory.transitions.push_back(transition({1, 2}, {3}, {-0.5f}, reward));
  return trajectory;
}

TrajectoryGroup group_of(std::vector<double> rewards) {
  TrajectoryGroup group;
  for (double reward : rewards) group.trajectories.push_back(single_turn(reward));
  return group;
}

TEST(RlAdvantages, AreRewardMinusGroupMean) {
  const std::vector<TrajectoryGroup> groups{group_of({1.0, 0.0, 0.0, 1.0}), group_of({0.5, -0.1, 0.2})};
  const std::vector<std::vector<double>> advantages = compute_advantages(groups);
  ASSERT_EQ(advantages.size(), 2u);
  EXPECT_EQ(advantages[0], (std::vector<double>{0.5, -0.5, -0.5, 0.5}));
  ASSERT_EQ(advantages[1].size(), 3u);
  EXPECT_NEAR(advantages[1][0], 0.3, 1e-12);
  EXPECT_NEAR(advantages[1][1], -0.3, 1e-12);
  EXPECT_NEAR(advantages[1][2], 0.0, 1e-12);
}

TEST(RlAdvantages, CountTheGroupRewardAndEveryStep) {
  TrajectoryGroup group;
  Trajectory two_steps;
  two_steps.transitions.push_back(transition({1}, {2}, {-1.0f}, 0.25));
  two_steps.transitions.push_back(transition({1, 2, 5}, {6}, {-1.0f}, 0.5));
  two_steps.final_reward = 1.0;
  group.trajectories.push_back(two_steps);
  group.trajectories.push_back(single_turn(0.0));
  EXPECT_EQ(group.total_rewards(), (std::vector<double>{1.75, 0.0}));
  EXPECT_EQ(compute_advantages({group})[0], (std::vector<double>{0.875, -0.875}));
}

TEST(RlAdvantages, ConstantRewardGroupsAreRecognised) {
  EXPECT_TRUE(has_constant_reward(group_of({0.0, 0.0, 0.0})));
  EXPECT_TRUE(has_constant_reward(group_of({1.0})));
  EXPECT_FALSE(has_constant_reward(group_of({0.0, 0.0, 1.0})));
}

TEST(RlTrajectoryToData, SingleTurnMasksTheObservation) {
  Trajectory trajectory;
  trajectory.transitions.push_back(transition({10, 11, 12}, {20, 21}, {-0.25f, -0.75f}));
  const std::vector<Datum> data = trajectory_to_data(trajectory, 2.0);
  ASSERT_EQ(data.size(), 1u);
  EXPECT_EQ(data[0].model_input.to_ints(), (std::vector<TokenId>{10, 11, 12, 20}));
  EXPECT_EQ(ints_of(data[0], "target_tokens"), (std::vector<std::int64_t>{11, 12, 20, 21}));
  EXPECT_EQ(floats_of(data[0], "logprobs"), (std::vector<float>{0.0f, 0.0f, -0.25f, -0.75f}));
  EXPECT_EQ(floats_of(data[0], "advantages"), (std::vector<float>{0.0f, 0.0f, 2.0f, 2.0f}));
  EXPECT_EQ(floats_of(data[0], "mask"), (std::vector<float>{0.0f, 0.0f, 1.0f, 1.0f}));
}

TEST(RlTrajectoryToData, ExtendingObservationsMergeIntoOneDatum) {
  Trajectory trajectory;
  trajectory.transitions.push_back(transition({1, 2}, {3}, {-0.5f}));
  trajectory.transitions.push_back(transition({1, 2, 3, 4}, {5, 6}, {-0.1f, -0.2f}));
  const std::vector<Datum> data = trajectory_to_data(trajectory, -1.0);
  ASSERT_EQ(data.size(), 1u);
  EXPECT_EQ(data[0].model_input.to_ints(), (std::vector<TokenId>{1, 2, 3, 4, 5}));
  EXPECT_EQ(ints_of(data[0], "target_tokens"), (std::vector<std::int64_t>{2, 3, 4, 5, 6}));
  EXPECT_EQ(floats_of(data[0], "logprobs"), (std::vector<float>{0.0f, -0.5f, 0.0f, -0.1f, -0.2f}));
  EXPECT_EQ(floats_of(data[0], "advantages"), (std::vector<float>{0.0f, -1.0f, 0.0f, -1.0f, -1.0f}));
  EXPECT_EQ(floats_of(data[0], "mask"), (std::vector<float>{0.0f, 1.0f, 0.0f, 1.0f, 1.0f}));
}

TEST(RlTrajectoryToData, AnObservationThatDoesNotExtendStartsANewDatum) {
  Trajectory trajectory;
  trajectory.transitions.push_back(transition({1, 2}, {3}, {-0.5f}));
  trajectory.transitions.push_back(transition({1, 2, 3, 4}, {5}, {-0.1f}));
  trajectory.transitions.push_back(transition({7, 8}, {9}, {-0.3f}));
  const std::vector<Datum> data = trajectory_to_data(trajectory, 1.0);
  ASSERT_EQ(data.size(), 2u);
  EXPECT_EQ(data[0].model_input.to_ints(), (std::vector<TokenId>{1, 2, 3, 4}));
  EXPECT_EQ(data[1].model_input.to_ints(), (std::vector<TokenId>{7, 8}));
  EXPECT_EQ(ints_of(data[1], "target_tokens"), (std::vector<std::int64_t>{8, 9}));
  EXPECT_EQ(floats_of(data[1], "mask"), (std::vector<float>{0.0f, 1.0f}));
}

TEST(RlTrajectoryToData, RefusesAnActionWithoutOneLogprobPerToken) {
  Trajectory trajectory;
  trajectory.transitions.push_back(transition({1, 2}, {3, 4}, {-0.5f}));
  EXPECT_THROW(trajectory_to_data(trajectory, 1.0), tinker::error);
}

TEST(RlAssembleTrainingData, KeepsGroupAndTrajectoryOrderAndChecksShapes) {
  const std::vector<TrajectoryGroup> groups{group_of({1.0, 0.0}), group_of({0.0, 0.0, 3.0})};
  const std::vector<Datum> data = assemble_training_data(groups, compute_advantages(groups));
  ASSERT_EQ(data.size(), 5u);
  EXPECT_EQ(floats_of(data[0], "advantages"), (std::vector<float>{0.0f, 0.5f}));
  EXPECT_EQ(floats_of(data[1], "advantages"), (std::vector<float>{0.0f, -0.5f}));
  EXPECT_EQ(floats_of(data[4], "advantages"), (std::vector<float>{0.0f, 2.0f}));
  EXPECT_THROW(assemble_training_data(groups, {{0.0, 0.0}}), tinker::error);
  EXPECT_THROW(assemble_training_data(groups, {{0.0, 0.0}, {0.0}}), tinker::error);
}

TEST(RlRemoveMask, DropsOnlyTheMask) {
  const Datum datum = remove_mask(trajectory_to_data(single_turn(1.0), 1.0).front());
  EXPECT_EQ(datum.loss_fn_inputs.count("mask"), 0u);
  EXPECT_EQ(datum.loss_fn_inputs.size(), 3u);
  EXPECT_EQ(full_sequence(datum).to_ints(), (std::vector<TokenId>{1, 2, 3}));
}

// Two datums with two action tokens each: sampled logprobs s, reference logprobs r, so
// d = s - r on action tokens = {0.5, -0.5} and {1.0, 0.2}; mean d = 0.3.
std::vector<Datum> kl_batch() {
  Trajectory first;
  first.transitions.push_back(transition({1}, {2, 3}, {-1.0f, -2.0f}));
  Trajectory second;
  second.transitions.push_back(transition({4}, {5, 6}, {-0.5f, -1.5f}));
  std::vector<Datum> data = trajectory_to_data(first, 1.0);
  const std::vector<Datum> more = trajectory_to_data(second, -1.0);
  data.insert(data.end(), more.begin(), more.end());
  return data;
}

TEST(RlKlPenalty, AddsCoefTimesMeanMinusOwnDifferenceOnActionTokens) {
  std::vector<Datum> data = kl_batch();
  const std::vector<std::vector<float>> reference{{-1.5f, -1.5f}, {-1.5f, -1.7f}};
  const double mean = apply_kl_penalty(data, reference, 0.5);
  EXPECT_NEAR(mean, 0.3, 1e-6);
  const std::vector<float> first = floats_of(data[0], "advantages");
  const std::vector<float> second = floats_of(data[1], "advantages");
  EXPECT_NEAR(first[0], 1.0 + 0.5 * (0.3 - 0.5), 1e-6);
  EXPECT_NEAR(first[1], 1.0 + 0.5 * (0.3 + 0.5), 1e-6);
  EXPECT_NEAR(second[0], -1.0 + 0.5 * (0.3 - 1.0), 1e-6);
  EXPECT_NEAR(second[1], -1.0 + 0.5 * (0.3 - 0.2), 1e-6);
}

TEST(RlKlPenalty, DiscountedSumsTheFuturePenalties) {
  std::vector<Datum> data = kl_batch();
  const std::vector<std::vector<float>> reference{{-1.5f, -1.5f}, {-1.5f, -1.7f}};
  apply_kl_penalty(data, reference, 1.0, 0.5);
  const std::vector<float> first = floats_of(data[0], "advantages");
  // penalties -0.2 and 0.8: position 0 gets -0.2 + 0.5 * 0.8.
  EXPECT_NEAR(first[0], 1.0 + (-0.2 + 0.5 * 0.8), 1e-6);
  EXPECT_NEAR(first[1], 1.0 + 0.8, 1e-6);
}

TEST(RlKlPenalty, ObservationTokensAreUntouchedAndSizesChecked) {
  std::vector<Datum> data;
  Trajectory trajectory;
  trajectory.transitions.push_back(transition({1, 2}, {3}, {-1.0f}));
  data = trajectory_to_data(trajectory, 0.0);
  apply_kl_penalty(data, {{-7.0f, -3.0f}}, 1.0);
  EXPECT_EQ(floats_of(data[0], "advantages"), (std::vector<float>{0.0f, 0.0f}));  // one action token: d = mean
  EXPECT_THROW(apply_kl_penalty(data, {{-1.0f}}, 1.0), tinker::error);
  EXPECT_THROW(apply_kl_penalty(data, {}, 1.0), tinker::error);
}

TEST(RlMetrics, TrajectoryMetricsUseTheCookbookKeys) {
  std::vector<TrajectoryGroup> groups{group_of({1.0, 0.0}), group_of({1.0, 1.0}), group_of({-0.1, -0.1})};
  groups[0].trajectories[0].transitions[0].metrics.set("correct", 1.0);
  groups[0].trajectories[1].transitions[0].metrics.set("correct", 0.0);
  groups[0].tags = {"a"};
  groups[1].tags = {"b"};
  const StepMetrics metrics = compute_trajectory_metrics(groups);
  EXPECT_NEAR(*metrics.get("env/all/reward/total"), (1.0 + 0.0 + 1.0 + 1.0 - 0.2) / 6.0, 1e-12);
  EXPECT_EQ(*metrics.get("env/all/total_episodes"), 6.0);
  EXPECT_EQ(*metrics.get("env/all/total_ac_tokens"), 6.0);
  EXPECT_EQ(*metrics.get("env/all/ob_tokens_per_turn"), 2.0);
  EXPECT_EQ(*metrics.get("env/all/correct"), 0.5);  // mean over the transitions that report it
  EXPECT_NEAR(*metrics.get("env/all/by_group/frac_mixed"), 1.0 / 3.0, 1e-12);
  EXPECT_NEAR(*metrics.get("env/all/by_group/frac_all_good"), 1.0 / 3.0, 1e-12);
  EXPECT_NEAR(*metrics.get("env/all/by_group/frac_all_bad"), 1.0 / 3.0, 1e-12);
  EXPECT_EQ(*metrics.get("env/a/reward/total"), 0.5);
  EXPECT_EQ(*metrics.get("env/b/reward/total"), 1.0);
}

TEST(RlMetrics, KlSampleTrainOverActionTokens) {
  const std::vector<Datum> data = kl_batch();
  const StepMetrics metrics = compute_kl_sample_train(data, {{-1.5f, -1.5f}, {-1.5f, -1.7f}});
  // action diffs s - t: 0.5, -0.5, 1.0, 0.2.
  EXPECT_NEAR(*metrics.get("optim/kl_sample_train_v1"), 0.3, 1e-6);
  EXPECT_NEAR(*metrics.get("optim/kl_sample_train_v2"), 0.5 * (0.25 + 0.25 + 1.0 + 0.04) / 4.0, 1e-6);
  EXPECT_NEAR(*metrics.get("optim/entropy"), (1.0 + 2.0 + 0.5 + 1.5) / 4.0, 1e-6);
}

TEST(RlOptions, ValidateNamesTheField) {
  RLOptions options;
  options.loss_fn = "dro";
  try {
    options.validate();
    FAIL() << "validate accepted loss_fn dro";
  } catch (const tinker::error& failure) {
    EXPECT_NE(std::string(failure.what()).find("RLOptions::loss_fn"), std::string::npos);
  }
  options.loss_fn = loss_fn::cispo;
  options.max_steps_off_policy = -1;
  EXPECT_THROW(options.validate(), tinker::error);
  options.max_steps_off_policy = 2;
  EXPECT_NO_THROW(options.validate());
}

}  // namespace
}  // namespace tinker::train
