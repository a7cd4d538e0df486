import RoostClient

struct Note: RoostModel, Equatable {
    var text: String
    var count: Int?
}

struct Celebrity: RoostModel, Equatable {
    var name: String
    var gender: String
}

struct Micropost: RoostModel {
    var text: String
    var user: Ref<RoostUser>
}
